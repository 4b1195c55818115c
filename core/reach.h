/*
 * reach.h - which classes outside a JAR Flink loads while it compiles a
 * statement that uses the JAR's factories (DESIGN.md, "Resolution" step 6).
 *
 * Flink's planner calls a few methods of a factory between a CREATE
 * TABLE's use and the job graph, and a few methods of the sources, sinks
 * and formats those create; the JVM loads the classes their code needs as
 * it runs.  Code that runs later, on the task managers (a source reader, a
 * codec, a dialect's run-time converters), is not run then, and what it
 * names is not loaded then.  This module follows the code from those
 * methods, without running it, over the JAR's parsed class files:
 *
 * Roots.  On each factory: its static initializer, its no-argument
 * constructor (ServiceLoader's), and factoryIdentifier, requiredOptions,
 * optionalOptions, forwardOptions, createDynamicTableSource,
 * createDynamicTableSink, createDecodingFormat, createEncodingFormat (as
 * the factory's class dispatches them).  On every JAR class instantiated
 * by reached code that implements one of Flink's source, sink or format
 * interfaces (DynamicTableSource, ScanTableSource, LookupTableSource,
 * DynamicTableSink, the Supports* abilities, DecodingFormat,
 * EncodingFormat, ProjectableDecodingFormat; through the JAR's own
 * supertypes, or by the name of an external supertype): those interfaces'
 * methods (getChangelogMode, copy, asSummaryString, get*RuntimeProvider,
 * createRuntimeDecoder/Encoder, list*, apply*, supports*, requires*) and
 * equals, hashCode, toString.
 *
 * Rules, as the JVM loads classes.  A reached method loads its return
 * type and the types of the parameters it reads (the verifier checks
 * values against them), and its instructions load: the owner of every
 * invoked method and accessed field, and the classes of its descriptor;
 * the class of `new` (which also instantiates it),
 * checkcast, instanceof, anewarray, multianewarray (arrays reduced to their
 * element class), ldc of a Class, MethodType or MethodHandle; exception
 * handlers' types; invokedynamic's bootstrap method, its arguments and its
 * call site's descriptor.  Loading a class loads its superclass and
 * interfaces.  new, getstatic, putstatic and invokestatic initialize the
 * class (reach its <clinit>, its superclasses' first).  invokestatic and
 * invokespecial reach the method they resolve to; invokevirtual and
 * invokeinterface reach the implementation in every instantiated JAR class
 * that may be a subtype of the owner (rapid type analysis, iterated to a
 * fixed point).  A lambda (LambdaMetafactory) is an instantiated object of
 * its interface whose method calls its implementation: its body is reached
 * only when that interface method is invoked.  A method handle given to any
 * other bootstrap method, or loaded by ldc, counts as invoked.
 *
 * Linking a JAR class (before its initialization) verifies all its
 * methods, run or not, and the verifier loads a class to check that a
 * value may go where the code puts it: so for every method of a linked
 * class, the parameter types of the methods it invokes, the types of the
 * fields it stores and its own return type are loaded.  A lambda made in
 * a reached method and handed there to an external method (a stream's
 * map, computeIfAbsent) as its interface is called at once; so is one
 * stored in a field, as it is made, that a reached method reads and hands
 * on as the field's type (a static final Function given to a stream).
 *
 * The result is the set of external classes (those `lookup` says the JAR
 * does not hold) so loaded: a superset of what a JVM loads on these paths
 * (tests/jvm checks it), but for code reached only through reflection,
 * and JAR objects other than such lambdas that external code calls back
 * (a Comparator given to a sort).
 *
 * Pure: no I/O, no global state; reentrant.
 */
#ifndef CMFS_REACH_H
#define CMFS_REACH_H

#include <stddef.h>

#include "classfile.h"
#include "err.h"

/*
 * The JAR's class `iname` (internal name, UTF-8, "a/b/C"): 0 and *out (a
 * parsed class file that stays valid and unchanged until reach_run
 * returns), or 0 and *out = NULL when the JAR does not hold it (an
 * external class); any other return stops the walk and is returned as is
 * (the callback sets its own error).  Called once per name.
 */
typedef int (*reach_lookup_fn)(void *ctx, const char *iname,
			       const struct classfile **out);

/* Caps on one walk: hitting one is -EFBIG with the cap named. */
struct reach_limits {
	size_t max_classes; /* distinct classes met, the JAR's and others */
	size_t max_methods; /* methods reached */
};

/* Fill `lim` with the defaults (far above any real connector's needs). */
void reach_limits_default(struct reach_limits *lim);

struct reach_result {
	/* The external classes loaded while compiling: internal names,
	 * sorted by bytes, unique; NULL-terminated. */
	char **compile;
	size_t ncompile;
	/* What the walk did: JAR classes loaded, methods reached. */
	size_t nclasses, nmethods;
};

/*
 * Walk from the `n` factory classes `factories` (internal names; each must
 * be the JAR's).  `providers` (np of them, internal names) are the classes
 * the JAR's META-INF/services/ files list: java.util.ServiceLoader
 * instantiates them, so once reached code calls one of its load methods,
 * each that the JAR holds is instantiated and constructed (whatever
 * service was asked for: a superset).  0 and *out (release with
 * reach_result_release), or
 * -EINVAL with the class and method and "offset N: reason" for bytecode
 * that does not decode or a bad name, -EFBIG for a cap, -ENOEXEC for a
 * factory the JAR does not hold, -ENOMEM, or what `lookup` returned.
 * `lim` NULL = the defaults.
 */
int reach_run(struct reach_result *out, const char *const *factories, size_t n,
	      const char *const *providers, size_t np, reach_lookup_fn lookup,
	      void *ctx, const struct reach_limits *lim, struct cmfs_err *err);

/* Free what a result holds (not the struct); a zeroed one is ok. */
void reach_result_release(struct reach_result *r);

#endif

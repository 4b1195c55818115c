/*
 * classfile.h - a reader for one Java class file (JVMS chapter 4).
 *
 * cmfs never runs the code it stores, but it must know what a factory JAR's
 * classes are: their supertypes, their members, the classes they name, and
 * whether a method just returns a constant string.  This reader parses one
 * class file from a byte buffer, checks every length, count and index
 * against the bytes it was given, and reports corrupt input as -EINVAL with
 * "offset N: reason" (N = the byte offset in the class file).
 *
 * What is parsed: magic, versions, the whole constant pool (every tag up
 * to Java 21: Utf8 ... Dynamic, InvokeDynamic, Module, Package), access
 * flags, this/super class, interfaces, fields (with their ConstantValue)
 * and methods (with the code[] of their Code attribute).  Other attributes
 * are skipped, but their lengths are checked.  Utf8 constants must be
 * well-formed modified UTF-8 (no overlong forms except C0 80 for U+0000).
 *
 * Ownership: a struct classfile borrows the bytes it was parsed from (its
 * Utf8 and code pointers point into them): keep them alive and unchanged
 * until classfile_free().  Every char * handed out is the caller's, to
 * free() (lists: classfile_names_free()).  No global state: one classfile
 * may be read by several threads, parsing is reentrant.
 */
#ifndef CMFS_CLASSFILE_H
#define CMFS_CLASSFILE_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* Constant-pool tags (JVMS 4.4). */
enum {
	CLASSFILE_UTF8 = 1,
	CLASSFILE_INTEGER = 3,
	CLASSFILE_FLOAT = 4,
	CLASSFILE_LONG = 5,
	CLASSFILE_DOUBLE = 6,
	CLASSFILE_CLASS = 7,
	CLASSFILE_STRING = 8,
	CLASSFILE_FIELDREF = 9,
	CLASSFILE_METHODREF = 10,
	CLASSFILE_INTERFACE_METHODREF = 11,
	CLASSFILE_NAME_AND_TYPE = 12,
	CLASSFILE_METHOD_HANDLE = 15,
	CLASSFILE_METHOD_TYPE = 16,
	CLASSFILE_DYNAMIC = 17,
	CLASSFILE_INVOKE_DYNAMIC = 18,
	CLASSFILE_MODULE = 19,
	CLASSFILE_PACKAGE = 20
};

/* Access flags used by the inspector (JVMS 4.1, 4.5, 4.6). */
enum {
	CLASSFILE_ACC_PUBLIC = 0x0001,
	CLASSFILE_ACC_PRIVATE = 0x0002,
	CLASSFILE_ACC_STATIC = 0x0008,
	CLASSFILE_ACC_FINAL = 0x0010,
	CLASSFILE_ACC_INTERFACE = 0x0200,
	CLASSFILE_ACC_ABSTRACT = 0x0400
};

/*
 * One constant-pool slot.  Index 0 and the slot after a Long or Double
 * have tag 0.  The meaning of `a` and `b` follows the tag:
 *   Class, String, MethodType, Module, Package: a = the Utf8 index;
 *   Fieldref, Methodref, InterfaceMethodref: a = Class, b = NameAndType;
 *   NameAndType: a = name (Utf8), b = descriptor (Utf8);
 *   MethodHandle: a = the referenced member, kind = reference_kind;
 *   Dynamic, InvokeDynamic: a = bootstrap method, b = NameAndType.
 * Every index has been checked to point at an entry of the right tag
 * (except bootstrap-method indexes, which point outside the pool).
 */
struct classfile_const {
	uint8_t tag;
	uint8_t kind; /* MethodHandle: reference_kind 1..9 */
	uint16_t a, b;
	uint32_t off;	      /* offset of the tag byte in the class file */
	uint32_t len;	      /* Utf8: length in bytes; numbers: 4 or 8 */
	const uint8_t *bytes; /* Utf8: modified UTF-8; numbers: big-endian */
};

/* A field or a method. */
struct classfile_member {
	uint16_t access;     /* CLASSFILE_ACC_* */
	uint16_t name;	     /* Utf8 index */
	uint16_t desc;	     /* Utf8 index: the descriptor */
	uint16_t constant;   /* fields: ConstantValue's index, 0 = none */
	uint32_t off;	     /* offset of the member in the class file */
	const uint8_t *code; /* methods: Code's code[], NULL = none */
	uint32_t code_len;   /* 1..65535 when code is set */
	const uint8_t *exc;  /* its exception_table: nexc entries of 8 bytes */
	uint16_t nexc;
};

/* A parsed class file: read-only once classfile_parse() returns it. */
struct classfile {
	const uint8_t *data; /* the borrowed bytes */
	size_t len;
	uint16_t minor, major;
	uint16_t ncp; /* constant_pool_count: valid indexes 1..ncp-1 */
	struct classfile_const *cp;
	uint16_t access;
	uint16_t this_class;  /* a Class index */
	uint16_t super_class; /* a Class index, 0 = none (Object, module) */
	uint16_t ninterfaces;
	uint16_t *interfaces; /* Class indexes */
	uint16_t nfields;
	struct classfile_member *fields;
	uint16_t nmethods;
	struct classfile_member *methods;
	/* BootstrapMethods: each entry's offset in data (its u2 method
	 * handle, u2 count, then the u2 arguments), lengths checked. */
	uint16_t nbsm;
	uint32_t *bsm;
	/* The arrays' room, for classfile_reparse (not for readers). */
	size_t cp_cap, if_cap, fields_cap, methods_cap, bsm_cap;
};

/*
 * Parse `len` bytes at `data` as one class file.  0 and *out (free with
 * classfile_free; it borrows `data`, see above), or -EINVAL with
 * "offset N: reason" in err, or -ENOMEM.  Trailing bytes are an error.
 */
int classfile_parse(struct classfile **out, const void *data, size_t len,
		    struct cmfs_err *err);

/*
 * classfile_parse() into cf, a class file parsed before (or zeroed), its
 * arrays kept and grown as needed: a reader of thousands of classes
 * allocates nothing for each.  The same returns; after an error cf's
 * contents are not to be read, but it can be parsed into again.
 */
int classfile_reparse(struct classfile *cf, const void *data, size_t len,
		      struct cmfs_err *err);

/* Free a parsed class file; NULL is ok.  The bytes stay the caller's. */
void classfile_free(struct classfile *cf);

/*
 * The Utf8 constant at `idx` as a standard UTF-8 C string (surrogate pairs
 * joined into 4-byte sequences).  0 and *out (caller frees), or -EINVAL
 * ("constant N: not a Utf8", or "offset N: reason" when it holds U+0000
 * or an unpaired surrogate, which no C string or UTF-8 text can carry).
 */
int classfile_utf8(char **out, const struct classfile *cf, unsigned idx,
		   struct cmfs_err *err);

/* 1 if the Utf8 constant at `idx` is exactly `s` (plain ASCII), else 0. */
int classfile_utf8_eq(const struct classfile *cf, unsigned idx, const char *s);

/*
 * The internal name ("java/lang/String", or an array descriptor such as
 * "[Ljava/lang/String;") of the Class constant at `idx`, as UTF-8.
 * 0 and *out (caller frees), or -EINVAL when idx is not a Class or its
 * name is not a valid class name (JVMS 4.2.1).
 */
int classfile_class_name(char **out, const struct classfile *cf, unsigned idx,
			 struct cmfs_err *err);

/* The String constant at `idx` as UTF-8: as classfile_utf8(). */
int classfile_string(char **out, const struct classfile *cf, unsigned idx,
		     struct cmfs_err *err);

/* The member with this name and descriptor, or NULL.  Borrowed. */
const struct classfile_member *classfile_method(const struct classfile *cf,
						const char *name,
						const char *desc);
const struct classfile_member *
classfile_field(const struct classfile *cf, const char *name, const char *desc);

/*
 * Every class the class file names: Class constants (arrays reduced to
 * their element class; primitive arrays name none), the classes in the
 * descriptors of NameAndType and MethodType constants, and in the
 * descriptors of its own fields and methods.  Internal names, UTF-8,
 * sorted by bytes, without duplicates; the class itself is included.
 * 0 and *out (a NULL-terminated array; free with classfile_names_free)
 * and *n, or -EINVAL on a bad name or descriptor, or -ENOMEM.
 */
int classfile_refs(char ***out, size_t *n, const struct classfile *cf,
		   struct cmfs_err *err);

/* Free an array from classfile_refs(); NULL is ok. */
void classfile_names_free(char **names);

/* What classfile_const_return() found. */
enum classfile_ret {
	CLASSFILE_RET_OTHER,  /* anything else: not a constant */
	CLASSFILE_RET_STRING, /* ldc/ldc_w of a String, then areturn */
	CLASSFILE_RET_FIELD   /* getstatic of a Fieldref, then areturn */
};

/*
 * Does method `m` just return a constant?  Looks at its first two
 * instructions only: `ldc`/`ldc_w` of a String constant or `getstatic`,
 * then `areturn`.  For STRING *index is the String constant, for FIELD the
 * Fieldref, which the caller resolves (it may live in another class).
 * Never fails: whatever else the code is, the answer is OTHER.
 */
enum classfile_ret classfile_const_return(const struct classfile *cf,
					  const struct classfile_member *m,
					  unsigned *index);

/*
 * One instruction of a method body, as classfile_insn_next() decodes it.
 * `index` is the constant-pool operand of the instructions that have one,
 * checked to be of a tag the instruction admits (JVMS 4.10.1.9):
 *   invokevirtual: Methodref; invokespecial, invokestatic: Methodref or
 *   InterfaceMethodref; invokeinterface: InterfaceMethodref;
 *   invokedynamic: InvokeDynamic (its bootstrap method checked to exist);
 *   new, checkcast, instanceof, anewarray, multianewarray: Class;
 *   getstatic, putstatic, getfield, putfield: Fieldref;
 *   ldc, ldc_w: Integer, Float, String, Class, MethodType, MethodHandle
 *   or Dynamic; ldc2_w: Long, Double or Dynamic.
 * Every other instruction has index 0.
 */
enum {
	CLASSFILE_OP_LDC = 0x12,
	CLASSFILE_OP_LDC_W = 0x13,
	CLASSFILE_OP_LDC2_W = 0x14,
	CLASSFILE_OP_GETSTATIC = 0xb2,
	CLASSFILE_OP_PUTSTATIC = 0xb3,
	CLASSFILE_OP_GETFIELD = 0xb4,
	CLASSFILE_OP_PUTFIELD = 0xb5,
	CLASSFILE_OP_INVOKEVIRTUAL = 0xb6,
	CLASSFILE_OP_INVOKESPECIAL = 0xb7,
	CLASSFILE_OP_INVOKESTATIC = 0xb8,
	CLASSFILE_OP_INVOKEINTERFACE = 0xb9,
	CLASSFILE_OP_INVOKEDYNAMIC = 0xba,
	CLASSFILE_OP_NEW = 0xbb,
	CLASSFILE_OP_ANEWARRAY = 0xbd,
	CLASSFILE_OP_CHECKCAST = 0xc0,
	CLASSFILE_OP_INSTANCEOF = 0xc1,
	CLASSFILE_OP_MULTIANEWARRAY = 0xc5
};

struct classfile_insn {
	uint32_t pc;	/* its offset in code[] */
	uint8_t op;	/* the opcode (wide: the opcode it widens) */
	uint16_t index; /* its constant, see above; 0 = none */
	uint16_t local; /* loads, stores (0x15..0x2d, 0x36..0x4e), iinc,
			 * ret: the local variable (aload_2: 2); else 0 */
};

/*
 * Decode the instruction of method m at *pc (start with 0): 1 with *insn
 * and *pc moved past it, 0 at the end of the code (or when m has none),
 * or -EINVAL with "offset N: reason" (N = the offset in the class file)
 * for an unknown opcode, an instruction cut by the end of the code, a
 * switch whose table does not fit, or an operand of the wrong kind.
 * A whole method takes at most code_len steps.
 */
int classfile_insn_next(const struct classfile *cf,
			const struct classfile_member *m, uint32_t *pc,
			struct classfile_insn *insn, struct cmfs_err *err);

/*
 * The catch_type of m's i-th exception handler (i < m->nexc): 0 and *cls =
 * a Class index, or 0 for a handler of any exception (finally); -EINVAL
 * when it is neither.
 */
int classfile_handler(const struct classfile *cf,
		      const struct classfile_member *m, unsigned i,
		      uint16_t *cls, struct cmfs_err *err);

/*
 * Bootstrap method `bsm` (an InvokeDynamic's or Dynamic's `a`): 0 and
 * *handle (a MethodHandle index) and *nargs, or -EINVAL when there is no
 * such entry.  Its i-th static argument: 0 and *arg (a loadable constant:
 * Integer, Float, Long, Double, Class, String, MethodHandle, MethodType
 * or Dynamic; checked when the class was parsed).
 */
int classfile_bootstrap(const struct classfile *cf, unsigned bsm,
			uint16_t *handle, uint16_t *nargs,
			struct cmfs_err *err);
uint16_t classfile_bootstrap_arg(const struct classfile *cf, unsigned bsm,
				 unsigned i);

/*
 * The classes a field or method descriptor names (arrays reduced to
 * their element class), in order, repeats kept: each is the n bytes at
 * names[k], borrowed from `desc` (n[k] bytes, no '\0').  0 and *count
 * (at most `cap` are stored; *count tells how many there were), or
 * -EINVAL for a malformed descriptor.  `desc` is standard UTF-8.
 */
int classfile_desc_classes(const char *desc, const char **names, size_t *n,
			   size_t cap, size_t *count);

#endif

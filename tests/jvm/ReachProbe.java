/*
 * ReachProbe - what a JVM loads from outside a connector JAR while Flink's
 * planner compiles a statement, for test_reach's cross-check.
 *
 *   java ReachProbe STUBS FIXTURE.jar
 *
 * STUBS is a class directory (or JAR) of stub Flink API classes.  The
 * fixture's classes are defined by a child-first loader over the JAR whose
 * parent records every class the JAR's code asks for and does not hold,
 * then hands the request to a loader over STUBS (and the JDK).  Through
 * java.util.ServiceLoader, as Flink's FactoryUtil does, each factory of the
 * service file is loaded, initialized and constructed; then the planner's
 * calls are made as cmfs's reach.h lists them: the factory methods, and on
 * what create* returns, the methods of Flink's source, sink and format
 * interfaces it implements, and equals, hashCode, toString.  Each call
 * gets stub arguments (interfaces as proxies that answer with more stubs);
 * a call that throws (an absent class, a null) is reported on stderr and
 * the probe goes on.  Prints the recorded classes, sorted, one per line.
 *
 * Reflection looks methods up on the stub interfaces only: asking the
 * JAR's classes for their methods would load every type their signatures
 * name, which Flink's planner never does.
 */
import java.io.File;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeSet;

public final class ReachProbe {
    /* What the planner calls on a factory (after ServiceLoader's
     * <clinit> and <init>). */
    static final String[] FACTORY_ROOTS = {
        "factoryIdentifier", "requiredOptions", "optionalOptions",
        "forwardOptions", "createDynamicTableSource",
        "createDynamicTableSink", "createDecodingFormat",
        "createEncodingFormat"};

    /* The interfaces whose methods it calls on what those create. */
    static final String[] API_TYPES = {
        "org.apache.flink.table.connector.source.DynamicTableSource",
        "org.apache.flink.table.connector.source.ScanTableSource",
        "org.apache.flink.table.connector.source.LookupTableSource",
        "org.apache.flink.table.connector.sink.DynamicTableSink",
        "org.apache.flink.table.connector.format.DecodingFormat",
        "org.apache.flink.table.connector.format.EncodingFormat",
        "org.apache.flink.table.connector.format.ProjectableDecodingFormat",
        "org.apache.flink.table.connector.format.Format",
        "org.apache.flink.table.connector.source.abilities.SupportsProjectionPushDown",
        "org.apache.flink.table.connector.source.abilities.SupportsReadingMetadata",
        "org.apache.flink.table.connector.source.abilities.SupportsWatermarkPushDown",
        "org.apache.flink.table.connector.source.abilities.SupportsFilterPushDown",
        "org.apache.flink.table.connector.source.abilities.SupportsLimitPushDown",
        "org.apache.flink.table.connector.sink.abilities.SupportsWritingMetadata",
        "org.apache.flink.table.connector.sink.abilities.SupportsOverwrite",
        "org.apache.flink.table.connector.sink.abilities.SupportsPartitioning"};

    static final Set<String> recorded = Collections.synchronizedSet(new TreeSet<>());

    /* The parent of the JAR's loader: records, then asks the stubs. */
    static final class Recorder extends ClassLoader {
        Recorder(ClassLoader stubs) {
            super(stubs);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve)
                throws ClassNotFoundException {
            recorded.add(name);
            return super.loadClass(name, resolve);
        }
    }

    /* The JAR's own classes first, then the parent. */
    static final class ChildFirst extends URLClassLoader {
        ChildFirst(URL[] urls, ClassLoader parent) {
            super(urls, parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve)
                throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    try {
                        c = findClass(name);
                    } catch (ClassNotFoundException e) {
                        c = getParent().loadClass(name);
                    }
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }

    static ClassLoader stubLoader;

    /* A stub value of type t: proxies for interfaces. */
    static Object stub(Class<?> t) {
        if (t == String.class || t == CharSequence.class || t == Object.class) {
            return "x";
        }
        if (t == boolean.class) {
            return false;
        }
        if (t == int.class || t == long.class || t == short.class
                || t == byte.class || t == char.class || t == float.class
                || t == double.class) {
            return defaultNumber(t);
        }
        if (t == Set.class) {
            return Collections.emptySet();
        }
        if (t == List.class) {
            return Collections.emptyList();
        }
        if (t == Optional.class) {
            return Optional.empty();
        }
        if (t == ClassLoader.class) {
            return stubLoader;
        }
        if (t.isArray()) {
            return java.lang.reflect.Array.newInstance(t.getComponentType(), 0);
        }
        if (t.isInterface()) {
            InvocationHandler h = (p, m, a) -> {
                if (m.getName().equals("equals")) {
                    return p == a[0];
                }
                if (m.getName().equals("hashCode")) {
                    return System.identityHashCode(p);
                }
                if (m.getName().equals("toString")) {
                    return "stub " + t.getName();
                }
                return stub(m.getReturnType());
            };
            return Proxy.newProxyInstance(stubLoader, new Class<?>[] {t}, h);
        }
        return null;
    }

    static Object defaultNumber(Class<?> t) {
        if (t == int.class) {
            return 0;
        }
        if (t == long.class) {
            return 0L;
        }
        if (t == short.class) {
            return (short) 0;
        }
        if (t == byte.class) {
            return (byte) 0;
        }
        if (t == char.class) {
            return (char) 0;
        }
        if (t == float.class) {
            return 0f;
        }
        return 0d;
    }

    /* Call m on o with stub arguments; its result, or null if it threw. */
    static Object call(Object o, Method m) {
        Object[] args = new Object[m.getParameterCount()];
        Class<?>[] types = m.getParameterTypes();
        for (int i = 0; i < args.length; i++) {
            args[i] = stub(types[i]);
        }
        try {
            return m.invoke(o, args);
        } catch (InvocationTargetException e) {
            System.err.println(m.getName() + ": " + e.getCause());
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.err.println(m.getName() + ": " + e);
        } catch (LinkageError e) {
            System.err.println(m.getName() + ": " + e);
        }
        return null;
    }

    static boolean isRoot(String name) {
        for (String r : new String[] {"getChangelogMode", "copy",
                "asSummaryString", "getScanRuntimeProvider",
                "getLookupRuntimeProvider", "getSinkRuntimeProvider",
                "createRuntimeDecoder", "createRuntimeEncoder"}) {
            if (r.equals(name)) {
                return true;
            }
        }
        return name.startsWith("apply") || name.startsWith("supports")
                || name.startsWith("list") || name.startsWith("requires");
    }

    /* The planner's calls on a source, sink or format it was given. */
    static void api(Object o) throws Exception {
        if (o == null) {
            return;
        }
        for (String n : API_TYPES) {
            Class<?> i;
            try {
                i = Class.forName(n, false, stubLoader);
            } catch (ClassNotFoundException e) {
                continue;
            }
            if (!i.isInstance(o)) {
                continue;
            }
            for (Method m : i.getMethods()) {
                if (isRoot(m.getName()) && !java.lang.reflect.Modifier.isStatic(m.getModifiers())) {
                    call(o, m);
                }
            }
        }
        call(o, Object.class.getMethod("equals", Object.class));
        call(o, Object.class.getMethod("hashCode"));
        call(o, Object.class.getMethod("toString"));
    }

    public static void main(String[] argv) throws Exception {
        stubLoader = new URLClassLoader(new URL[] {new File(argv[0]).toURI().toURL()},
                ClassLoader.getPlatformClassLoader());
        ClassLoader jar = new ChildFirst(new URL[] {new File(argv[1]).toURI().toURL()},
                new Recorder(stubLoader));
        Class<?> factory = Class.forName("org.apache.flink.table.factories.Factory",
                false, stubLoader);
        Iterator<?> it = ServiceLoader.load(factory, jar).iterator();
        List<Object> made = new ArrayList<>();
        while (true) {
            Object f;
            try {
                if (!it.hasNext()) {
                    break;
                }
                f = it.next();
            } catch (Throwable e) {
                System.err.println("ServiceLoader: " + e);
                continue;
            }
            Set<String> done = new TreeSet<>();
            for (String r : FACTORY_ROOTS) {
                for (Class<?> i : interfacesOf(f.getClass())) {
                    if (i.getClassLoader() == jar) {
                        continue;
                    }
                    for (Method m : i.getMethods()) {
                        String sig = m.getName()
                                + java.util.Arrays.toString(m.getParameterTypes());
                        if (m.getName().equals(r) && done.add(sig)) {
                            Object o = call(f, m);
                            if (r.startsWith("create")) {
                                made.add(o);
                            }
                        }
                    }
                }
            }
        }
        for (Object o : made) {
            api(o);
        }
        for (String n : recorded) {
            System.out.println(n);
        }
    }

    /* The stub interfaces c implements (walking up through the JAR's
     * classes, whose supertypes are loaded already), each once. */
    static Set<Class<?>> interfacesOf(Class<?> c) {
        Set<Class<?>> out = new java.util.LinkedHashSet<>();
        for (; c != null; c = c.getSuperclass()) {
            for (Class<?> i : c.getInterfaces()) {
                addAll(i, out);
            }
        }
        return out;
    }

    static void addAll(Class<?> i, Set<Class<?>> out) {
        if (!out.add(i)) {
            return;
        }
        for (Class<?> j : i.getInterfaces()) {
            addAll(j, out);
        }
    }
}

/*
 * OptionsProbe - the option keys a connector JAR's factories declare, as a
 * JVM sees them, for test_options' cross-check.
 *
 *   java OptionsProbe STUBS FIXTURE.jar
 *
 * STUBS is a class directory of stub Flink API classes (java/options/stubs
 * compiled).  Each factory of the JAR's service file is loaded through
 * java.util.ServiceLoader, as Flink's FactoryUtil does, and its
 * requiredOptions() and optionalOptions() are called.  Prints one line per
 * option, "IDENTIFIER required|optional KEY", sorted.
 */
import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Collection;
import java.util.ServiceLoader;
import java.util.TreeSet;

public final class OptionsProbe {
    public static void main(String[] args) throws Exception {
        URLClassLoader stubs = new URLClassLoader(
                new URL[] {new File(args[0]).toURI().toURL()},
                ClassLoader.getPlatformClassLoader());
        URLClassLoader jar = new URLClassLoader(
                new URL[] {new File(args[1]).toURI().toURL()}, stubs);
        Class<?> factory =
                stubs.loadClass("org.apache.flink.table.factories.Factory");
        TreeSet<String> out = new TreeSet<>();
        for (Object f : ServiceLoader.load(factory, jar)) {
            String id = (String) factory.getMethod("factoryIdentifier")
                    .invoke(f);
            for (String set : new String[] {"required", "optional"}) {
                Method m = factory.getMethod(set + "Options");
                for (Object o : (Collection<?>) m.invoke(f)) {
                    String key = (String) o.getClass().getMethod("key")
                            .invoke(o);
                    out.add(id + " " + set + " " + key);
                }
            }
        }
        for (String line : out) {
            System.out.println(line);
        }
    }
}

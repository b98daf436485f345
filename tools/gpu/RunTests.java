import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.discovery.DiscoverySelectors;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import java.io.PrintWriter;
import java.util.Arrays;

/**
 * Runs the named JUnit test classes (or methods, as Class#method) without Maven, for the GPU machine (it has no JDK or Maven; tools/gpu/bundle.sh
 * carries a jlinked runtime, the test classes and this runner). One line per test, then the summary and every
 * failure's stack trace; exit status 1 when any test failed.
 */
public final class RunTests {
    public static void main(String[] classNames) {
        LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
                .selectors(Arrays.stream(classNames).map(name -> name.contains("#")
                        ? DiscoverySelectors.selectMethod(name) : DiscoverySelectors.selectClass(name)).toList())
                .build();
        SummaryGeneratingListener summary = new SummaryGeneratingListener();
        LauncherFactory.create().execute(request, summary, new LinePerTest());
        TestExecutionSummary result = summary.getSummary();
        PrintWriter out = new PrintWriter(System.out, true);
        result.printTo(out);
        result.printFailuresTo(out, 40);
        System.exit(result.getTotalFailureCount() == 0 && result.getTestsFoundCount() > 0 ? 0 : 1);
    }

    private static final class LinePerTest implements TestExecutionListener {
        @Override
        public void executionFinished(TestIdentifier test, TestExecutionResult result) {
            if (test.isTest()) {
                String why = result.getThrowable().map(t -> ": " + t).orElse("");
                System.out.println(result.getStatus() + " " + name(test) + why);
            }
        }

        @Override
        public void executionSkipped(TestIdentifier test, String reason) {
            System.out.println("SKIPPED " + name(test) + ": " + reason);
        }

        private static String name(TestIdentifier test) {
            return test.getUniqueId().replaceAll("\\[[a-z-]+:", "").replace("]", "").replace("/", " ")
                    .replace("junit-jupiter ", "") + " " + test.getDisplayName();
        }
    }
}

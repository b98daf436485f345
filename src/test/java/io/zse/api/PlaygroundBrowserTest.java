package io.zse.api;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The playground at / in a real browser: Debian's chromium driven by npm's playwright-core
 * (src/test/browser/playground.mjs). {@code .ci/run} installs both; where either is missing the browser test is
 * skipped, saying what is missing. The screenshot is written to target/playground.png.
 */
@QuarkusTest
class PlaygroundBrowserTest extends ApiTestBase {
    private static final Path SCRIPT_DIR = Path.of("src/test/browser");

    @Test
    void thePageIsServedWithoutAKey() {
        RestAssured.given().get("/").then().statusCode(200).contentType(containsString("text/html"))
                .body(containsString("ZSE playground"));
        RestAssured.given().get("/playground.js").then().statusCode(200).body(containsString("/v1/chat/completions"));
    }

    @Test
    void typeAMessageWatchItStreamAndStopIt() throws IOException, InterruptedException {
        Path chromium = Path.of(System.getenv().getOrDefault("ZSE_CHROMIUM", "/usr/bin/chromium"));
        Assumptions.assumeTrue(Files.isExecutable(chromium), "no Chromium at " + chromium
                + " (apt-get install chromium, as .ci/run does, or set ZSE_CHROMIUM)");
        Assumptions.assumeTrue(Files.isDirectory(SCRIPT_DIR.resolve("node_modules/playwright-core")),
                "playwright-core is not installed (npm ci --prefix src/test/browser, as .ci/run does)");
        Assumptions.assumeTrue(onPath("node"), "no node on the PATH (Node.js drives the browser)");

        Path screenshot = Path.of("target/playground.png").toAbsolutePath();
        Files.deleteIfExists(screenshot);
        Path log = Path.of("target/playground-browser.log").toAbsolutePath();
        Process node = new ProcessBuilder("node", "playground.mjs", baseUrl(), KEY, screenshot.toString())
                .directory(SCRIPT_DIR.toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            assertTrue(node.waitFor(120, TimeUnit.SECONDS), "the browser run finished in time");
        } finally {
            node.destroyForcibly();
        }
        String output = Files.readString(log);
        System.out.println("playground browser run: " + output);
        assertEquals(0, node.exitValue(), output);
        assertTrue(output.contains("\"model\":\"" + MODEL + "\""), output);
        assertTrue(output.contains("\"status\":\"stopped: the request was cancelled\""), output);
        assertTrue(Files.size(screenshot) > 10_000, "a screenshot was taken");
    }

    private static boolean onPath(String command) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
            if (Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return false;
    }
}

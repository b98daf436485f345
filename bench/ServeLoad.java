import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Load against a running `zse serve`: for each concurrency, that many streaming chat requests at once; prints
 * aggregate generated tok/s and p50/p95 time to first token. Run: java bench/ServeLoad.java URL MODEL MAX_TOKENS C...
 */
public class ServeLoad {
    private static final Pattern COMPLETION_TOKENS = Pattern.compile("\"completion_tokens\":(\\d+)");

    /** One streamed response: its HTTP status, time to first token (-1: none), tokens, and how it ended. */
    record Stream(int status, double ttftMillis, int tokens, boolean done, boolean errorEvent) {
        /** 200, an ending [DONE] and no error event on the way. */
        boolean ok() {
            return status == 200 && done && !errorEvent;
        }
    }

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String model = args[1];
        int maxTokens = Integer.parseInt(args[2]);
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        run(client, url, model, maxTokens, 1); // warm-up
        System.out.printf("%-12s %10s %14s %12s %12s%n", "concurrency", "tokens", "aggregate tok/s", "TTFT p50 ms", "TTFT p95 ms");
        for (int i = 3; i < args.length; i++) {
            int c = Integer.parseInt(args[i]);
            long start = System.nanoTime();
            List<Stream> streams = run(client, url, model, maxTokens, c);
            double seconds = (System.nanoTime() - start) / 1e9;
            int tokens = streams.stream().mapToInt(Stream::tokens).sum();
            double[] ttft = streams.stream().mapToDouble(Stream::ttftMillis).sorted().toArray();
            System.out.printf("%-12d %10d %14.1f %12.0f %12.0f%n", c, tokens, tokens / seconds, percentile(ttft, 0.5),
                    percentile(ttft, 0.95));
        }
    }

    static List<Stream> run(HttpClient client, String url, String model, int maxTokens, int concurrency) throws Exception {
        List<CompletableFuture<Stream>> futures = new ArrayList<>();
        for (int i = 0; i < concurrency; i++) {
            futures.add(stream(client, url, model, maxTokens, i));
        }
        List<Stream> out = new ArrayList<>();
        for (CompletableFuture<Stream> f : futures) {
            out.add(f.get());
        }
        return out;
    }

    /** The body of a streaming chat request; {@code seed} varies the prompt and the sampling. */
    static String chatBody(String model, int maxTokens, int seed) {
        return "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Tell story number " + seed
                + " about a dog\"}],\"max_tokens\":" + maxTokens + ",\"temperature\":0.8,\"seed\":" + seed
                + ",\"stream\":true,\"stream_options\":{\"include_usage\":true}}";
    }

    /** Sends one streaming chat request and reads it to the end. */
    static CompletableFuture<Stream> stream(HttpClient client, String url, String model, int maxTokens, int seed) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url + "/v1/chat/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(chatBody(model, maxTokens, seed))).build();
        long sent = System.nanoTime();
        return client.sendAsync(request, HttpResponse.BodyHandlers.ofLines()).thenApply(response -> {
            double[] ttft = {-1};
            int[] tokens = {0};
            boolean[] done = {false};
            boolean[] errorEvent = {false};
            response.body().forEach(line -> {
                if (ttft[0] < 0 && line.contains("\"content\":\"") && !line.contains("\"content\":\"\"")) {
                    ttft[0] = (System.nanoTime() - sent) / 1e6;
                }
                Matcher m = COMPLETION_TOKENS.matcher(line);
                if (m.find()) {
                    tokens[0] = Integer.parseInt(m.group(1));
                }
                done[0] |= line.equals("data: [DONE]");
                errorEvent[0] |= line.startsWith("data: {\"error\"");
            });
            return new Stream(response.statusCode(), ttft[0], tokens[0], done[0], errorEvent[0]);
        });
    }

    static double percentile(double[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }
}

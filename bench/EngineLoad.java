import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Load against any OpenAI-compatible server (`zse serve`, llama.cpp's `llama-server`, ...): streaming
 * /v1/chat/completions, greedy (temperature 0), prompts that differ from their first word on so no prefix cache helps.
 * One result line per run, `key=value` pairs, so a script can pick medians out of several runs.
 *
 * <pre>
 * java bench/EngineLoad.java URL LABEL load   MAX_TOKENS PROMPT_WORDS C...   aggregate tok/s, TTFT p50/p95 at C streams
 *                                              (after 4 warm-up requests, reported on a line of their own)
 * java bench/EngineLoad.java URL LABEL prefix MAX_TOKENS SYSTEM_WORDS REQUESTS PARALLEL
 *                                              REQUESTS sharing one long system prompt, PARALLEL at a time: TTFT each
 * java bench/EngineLoad.java URL LABEL flood  C                        C requests without max_tokens, all at once:
 *                                              errors, finish reasons, tokens (they end at the server's context cap)
 * </pre>
 * The model id comes from GET /v1/models. Tokens are the usage's completion_tokens where the server sends usage,
 * else the number of content chunks.
 */
public class EngineLoad {
    private static final int WARMUP_REQUESTS = 4;
    private static final int WARMUP_TOKENS = 400;
    private static final Pattern COMPLETION_TOKENS = Pattern.compile("\"completion_tokens\":(\\d+)");
    private static final Pattern PROMPT_TOKENS = Pattern.compile("\"prompt_tokens\":(\\d+)");
    private static final Pattern FINISH = Pattern.compile("\"finish_reason\":\"(\\w+)\"");
    private static final Pattern MODEL_ID = Pattern.compile("\"id\":\"([^\"]+)\"");
    private static final String[] WORDS = ("time year people way day man thing woman life child world school state "
            + "family student group country problem hand part place case week company system program question work "
            + "government number night point home water room mother area money story fact month lot right study book "
            + "eye job word business issue side kind head house service friend father power hour game line end member "
            + "law car city community name president team minute idea kid body information back parent face others "
            + "level office door health person art war history party result change morning reason research girl guy "
            + "moment air teacher force education river garden winter silver engine market bridge planet window "
            + "yellow quickly gently under between before after because although purple orange mountain forest "
            + "ocean violin pencil rabbit thunder coffee lantern harbor meadow castle dragon").split(" ");

    /** One streamed response. */
    record Stream(int status, double ttftMillis, double totalMillis, int tokens, int promptTokens, boolean done,
                  boolean errorEvent, String finish, String error) {
        boolean ok() {
            return status == 200 && done && !errorEvent;
        }
    }

    static HttpClient client;
    static String url;
    static String model;
    static String label;

    public static void main(String[] args) throws Exception {
        Locale.setDefault(Locale.ROOT);
        url = args[0];
        label = args[1];
        String mode = args[2];
        client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(Duration.ofSeconds(10)).build();
        String models = client.send(HttpRequest.newBuilder(URI.create(url + "/v1/models")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        Matcher m = MODEL_ID.matcher(models);
        model = m.find() ? m.group(1) : "model";
        switch (mode) {
            case "load" -> load(Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                    Arrays.stream(args, 5, args.length).mapToInt(Integer::parseInt).toArray());
            case "prefix" -> prefix(Integer.parseInt(args[3]), Integer.parseInt(args[4]), Integer.parseInt(args[5]),
                    Integer.parseInt(args[6]));
            case "flood" -> flood(Integer.parseInt(args[3]));
            default -> throw new IllegalArgumentException(mode);
        }
    }

    static void load(int maxTokens, int promptWords, int[] concurrencies) throws Exception {
        // Requests first, untimed in the table: a server's first requests pay one-off costs (a JVM compiling its hot
        // paths, CUDA graphs being recorded) that would otherwise land in the first concurrency's figures. zse on
        // the bundled model reached its steady one-stream rate after about 1500 tokens: 4 requests of 400.
        Stream first = null;
        Stream last = null;
        for (int i = 0; i < WARMUP_REQUESTS; i++) {
            last = join(List.of(stream(body(null, words(999_000 + i, promptWords), WARMUP_TOKENS)))).getFirst();
            first = first == null ? last : first;
        }
        System.out.printf("label=%s mode=load-warmup requests=%d first_ttft_ms=%.0f first_total_ms=%.0f "
                        + "last_ttft_ms=%.0f last_total_ms=%.0f ok=%s%n", label, WARMUP_REQUESTS, first.ttftMillis(),
                first.totalMillis(), last.ttftMillis(), last.totalMillis(), first.ok() && last.ok());
        for (int c : concurrencies) {
            // a different seed range each time, so a prompt cache kept from the run before cannot help either
            int base = (int) (System.nanoTime() % 1_000_000) * 100;
            long start = System.nanoTime();
            List<CompletableFuture<Stream>> futures = new ArrayList<>();
            for (int i = 0; i < c; i++) {
                futures.add(stream(body(null, words(base + i, promptWords), maxTokens)));
            }
            List<Stream> streams = join(futures);
            double seconds = (System.nanoTime() - start) / 1e9;
            int tokens = streams.stream().mapToInt(Stream::tokens).sum();
            double[] ttft = streams.stream().mapToDouble(Stream::ttftMillis).sorted().toArray();
            System.out.printf("label=%s mode=load c=%d max_tokens=%d prompt_tokens_avg=%.0f tokens=%d seconds=%.2f "
                            + "tok_s=%.2f ttft_p50_ms=%.0f ttft_p95_ms=%.0f ttft_max_ms=%.0f errors=%d finish=%s%n",
                    label, c, maxTokens, streams.stream().mapToInt(Stream::promptTokens).average().orElse(0), tokens,
                    seconds, tokens / seconds, percentile(ttft, 0.5), percentile(ttft, 0.95), ttft[ttft.length - 1],
                    streams.stream().filter(s -> !s.ok()).count(), finishes(streams));
            printErrors(streams);
        }
    }

    static void prefix(int maxTokens, int systemWords, int requests, int parallel) throws Exception {
        String system = "You are a helpful assistant. Background notes follow. " + words(424242, systemWords);
        int base = (int) (System.nanoTime() % 1_000_000) * 100;
        List<Stream> all = new ArrayList<>();
        for (int i = 0; i < requests; i += parallel) {
            List<CompletableFuture<Stream>> futures = new ArrayList<>();
            for (int j = i; j < Math.min(requests, i + parallel); j++) {
                futures.add(stream(body(system, "Question " + (base + j) + ": " + words(base + j, 8), maxTokens)));
            }
            for (Stream s : join(futures)) {
                all.add(s);
                System.out.printf("label=%s mode=prefix request=%d prompt_tokens=%d ttft_ms=%.0f total_ms=%.0f ok=%s%n",
                        label, all.size(), s.promptTokens(), s.ttftMillis(), s.totalMillis(), s.ok());
            }
        }
        double[] rest = all.stream().skip(parallel).mapToDouble(Stream::ttftMillis).sorted().toArray();
        System.out.printf("label=%s mode=prefix-summary requests=%d parallel=%d prompt_tokens=%d first_ttft_ms=%.0f "
                        + "rest_ttft_p50_ms=%.0f rest_ttft_p95_ms=%.0f rest_ttft_min_ms=%.0f errors=%d%n",
                label, requests, parallel, all.get(0).promptTokens(), all.get(0).ttftMillis(), percentile(rest, 0.5),
                percentile(rest, 0.95), rest[0], all.stream().filter(s -> !s.ok()).count());
        printErrors(all);
    }

    static void flood(int c) throws Exception {
        long start = System.nanoTime();
        List<CompletableFuture<Stream>> futures = new ArrayList<>();
        for (int i = 0; i < c; i++) {
            futures.add(stream(body(null, words(7000 + i, 20), -1)));
        }
        List<Stream> streams = join(futures);
        double seconds = (System.nanoTime() - start) / 1e9;
        int[] tokens = streams.stream().mapToInt(Stream::tokens).sorted().toArray();
        System.out.printf("label=%s mode=flood c=%d seconds=%.1f completed_ok=%d errors=%d tokens_min=%d tokens_max=%d "
                        + "tokens_sum=%d prompt_tokens_avg=%.0f finish=%s%n",
                label, c, seconds, streams.stream().filter(Stream::ok).count(),
                streams.stream().filter(s -> !s.ok()).count(), tokens[0], tokens[tokens.length - 1],
                Arrays.stream(tokens).sum(), streams.stream().mapToInt(Stream::promptTokens).average().orElse(0),
                finishes(streams));
        printErrors(streams);
    }

    static String finishes(List<Stream> streams) {
        java.util.Map<String, Long> counts = new java.util.TreeMap<>();
        streams.forEach(s -> counts.merge(String.valueOf(s.finish()), 1L, Long::sum));
        return counts.toString().replace(" ", "");
    }

    static void printErrors(List<Stream> streams) {
        streams.stream().filter(s -> !s.ok()).limit(5).forEach(s -> System.out.printf(
                "  error: status=%d done=%s errorEvent=%s %s%n", s.status(), s.done(), s.errorEvent(), s.error()));
    }

    static List<Stream> join(List<CompletableFuture<Stream>> futures) throws Exception {
        List<Stream> out = new ArrayList<>();
        for (CompletableFuture<Stream> f : futures) {
            out.add(f.get());
        }
        return out;
    }

    /** Words picked by {@code seed}; the seed itself leads, so two prompts differ from their first token. */
    static String words(int seed, int n) {
        Random r = new Random(seed);
        StringBuilder sb = new StringBuilder().append(seed);
        for (int i = 0; i < n; i++) {
            sb.append(' ').append(WORDS[r.nextInt(WORDS.length)]);
        }
        return sb.toString();
    }

    static String body(String system, String user, int maxTokens) {
        StringBuilder sb = new StringBuilder("{\"model\":\"").append(model).append("\",\"messages\":[");
        if (system != null) {
            sb.append("{\"role\":\"system\",\"content\":\"").append(system).append("\"},");
        }
        sb.append("{\"role\":\"user\",\"content\":\"").append(user).append("\"}]");
        if (maxTokens > 0) {
            sb.append(",\"max_tokens\":").append(maxTokens);
        }
        return sb.append(",\"temperature\":0,\"stream\":true,\"stream_options\":{\"include_usage\":true}}").toString();
    }

    static CompletableFuture<Stream> stream(String body) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(url + "/v1/chat/completions"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        long sent = System.nanoTime();
        return client.sendAsync(request, HttpResponse.BodyHandlers.ofLines()).thenApply(response -> {
            double[] ttft = {-1};
            int[] usage = {-1, -1};
            int[] chunks = {0};
            boolean[] done = {false};
            boolean[] errorEvent = {false};
            String[] finish = {null};
            StringBuilder error = new StringBuilder();
            response.body().forEach(line -> {
                if (line.contains("\"content\":\"") && !line.contains("\"content\":\"\"")) {
                    chunks[0]++;
                    if (ttft[0] < 0) {
                        ttft[0] = (System.nanoTime() - sent) / 1e6;
                    }
                }
                Matcher m = COMPLETION_TOKENS.matcher(line);
                if (m.find()) {
                    usage[0] = Integer.parseInt(m.group(1));
                }
                m = PROMPT_TOKENS.matcher(line);
                if (m.find()) {
                    usage[1] = Integer.parseInt(m.group(1));
                }
                m = FINISH.matcher(line);
                if (m.find()) {
                    finish[0] = m.group(1);
                }
                done[0] |= line.equals("data: [DONE]");
                if (line.startsWith("data: {\"error\"") || (response.statusCode() != 200 && error.length() < 300)) {
                    errorEvent[0] |= line.startsWith("data: {\"error\"");
                    error.append(line, 0, Math.min(line.length(), 300));
                }
            });
            return new Stream(response.statusCode(), ttft[0], (System.nanoTime() - sent) / 1e6,
                    usage[0] >= 0 ? usage[0] : chunks[0], usage[1], done[0], errorEvent[0], finish[0],
                    error.toString());
        }).exceptionally(t -> new Stream(-1, -1, -1, 0, -1, false, false, null, String.valueOf(t)));
    }

    static double percentile(double[] sorted, double p) {
        return sorted.length == 0 ? Double.NaN : sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
    }
}

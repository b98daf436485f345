import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Soak against a running `zse serve`: for a while, streaming chat clients in a loop, a disconnect storm (clients that
 * hang up after the first chunk), slow readers and clients that send their headers slowly. Every interval it prints a
 * row (RSS of the server, heap, completed, errors, disconnects); at the end, whether RSS stayed flat after warm-up and
 * how many request objects are still alive once the server is idle. Uses ServeLoad (same folder) for the streams.
 * Run: java bench/Soak.java URL MODEL SERVER_PID [--seconds 300] [--interval 10] [--warmup 60] [--streams 64]
 * [--storm 8] [--storm-pause 50] [--slow-readers 4] [--slow-headers 2] [--max-tokens 32] [--slow-max-tokens 256]
 * [--idle 30]
 */
public class Soak {
    /** Objects that live exactly as long as one request; any left once the server is idle leaked. */
    static final List<String> PER_REQUEST_CLASSES = List.of(
            "io.zse.api.SseStream", "io.zse.api.CompletionRun", "io.zse.serve.BatchingEngine$Sequence");

    public static void main(String[] args) throws Exception {
        Options o = Options.parse(args);
        Server server = new Server(o.url, o.pid);
        Tally tally = new Tally();
        Load load = new Load(o, tally);
        System.out.printf("soak: %d s, %d streams, %d disconnecting, %d slow readers, %d slow-header clients, %d cores%n%n",
                o.seconds, o.streams, o.storm, o.slowReaders, o.slowHeaders, Runtime.getRuntime().availableProcessors());
        System.out.println("| s | RSS MiB | heap used MiB | heap committed MiB | completed | errors | refused (503) | disconnects |");
        System.out.println("|---|---|---|---|---|---|---|---|");
        load.start();
        long start = System.nanoTime();
        List<Sample> samples = new ArrayList<>();
        for (long next = o.interval; next <= o.seconds; next += o.interval) {
            Thread.sleep(Math.max(0, start / 1_000_000 + next * 1000 - System.nanoTime() / 1_000_000));
            Sample s = new Sample(next, server.rssMiB(), server.heap(), tally.completed.get(), tally.errors.get(),
                    tally.refused.get(), tally.disconnects.get());
            samples.add(s);
            System.out.println(s.row());
        }
        boolean drained = load.stop(Duration.ofSeconds(120));
        Thread.sleep(o.idleSeconds * 1000L); // idle for several heartbeat intervals: what is still alive now is held, not in flight
        Map<String, Long> live = server.liveInstances(PER_REQUEST_CLASSES);
        System.out.println();
        new Summary(o, samples, tally, live, drained, server.rssMiB()).print();
    }

    record Options(String url, String model, long pid, int seconds, int interval, int warmup, int streams, int storm,
                   int slowReaders, int slowHeaders, int maxTokens, int slowMaxTokens, int idleSeconds,
                   int stormPauseMillis) {
        static Options parse(String[] a) {
            Map<String, Integer> n = new java.util.HashMap<>(Map.ofEntries(Map.entry("seconds", 300),
                    Map.entry("interval", 10), Map.entry("warmup", 60), Map.entry("streams", 64), Map.entry("storm", 8),
                    Map.entry("storm-pause", 50), Map.entry("slow-readers", 4), Map.entry("slow-headers", 2),
                    Map.entry("max-tokens", 32), Map.entry("slow-max-tokens", 256), Map.entry("idle", 30)));
            for (int i = 3; i < a.length; i += 2) {
                String key = a[i].replaceFirst("^--", "");
                if (!n.containsKey(key) || i + 1 >= a.length) {
                    throw new IllegalArgumentException("unknown or incomplete option " + a[i] + "; known: " + n.keySet());
                }
                n.put(key, Integer.parseInt(a[i + 1]));
            }
            return new Options(a[0], a[1], Long.parseLong(a[2]), n.get("seconds"), n.get("interval"), n.get("warmup"),
                    n.get("streams"), n.get("storm"), n.get("slow-readers"), n.get("slow-headers"), n.get("max-tokens"),
                    n.get("slow-max-tokens"), n.get("idle"), n.get("storm-pause"));
        }
    }

    /** Counts shared by all clients; the first few errors are kept to say what went wrong. */
    static final class Tally {
        final AtomicLong completed = new AtomicLong();
        final AtomicLong errors = new AtomicLong();
        final AtomicLong disconnects = new AtomicLong();
        final AtomicLong refused = new AtomicLong();
        final ConcurrentLinkedQueue<String> firstErrors = new ConcurrentLinkedQueue<>();

        /** A 503 is the server shedding load (its queue is full), counted apart from real errors. */
        void failed(int status, String what) {
            if (status == 503) {
                refused.incrementAndGet();
            } else {
                error(what);
            }
        }

        void error(String what) {
            if (errors.incrementAndGet() <= 5) {
                firstErrors.add(what);
            }
        }
    }

    /** The client kinds, each on its own virtual threads, every one repeating its request until stopped. */
    static final class Load {
        interface Client {
            void once(int seed) throws Exception;
        }

        private final Options o;
        private final Tally tally;
        private final List<Thread> threads = new ArrayList<>();
        private final AtomicInteger seeds = new AtomicInteger();
        private volatile boolean running = true;

        Load(Options o, Tally tally) {
            this.o = o;
            this.tally = tally;
        }

        void start() {
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
            URI uri = URI.create(o.url);
            repeat(o.streams, "stream", seed -> {
                ServeLoad.Stream s = ServeLoad.stream(http, o.url, o.model, o.maxTokens, seed).get();
                count(s.ok(), s.status(), "stream: status " + s.status() + ", done " + s.done() + ", error event " + s.errorEvent());
            });
            repeat(o.storm, "disconnect", seed -> {
                try (ChatSocket c = new ChatSocket(uri, ServeLoad.chatBody(o.model, o.maxTokens, seed), 0)) {
                    int status = c.status();
                    if (status == 200 && c.readUntil("data: {", -1)) {
                        tally.disconnects.incrementAndGet(); // hangs up here, mid-stream
                    } else {
                        tally.failed(status, "disconnect: status " + status);
                    }
                }
                Thread.sleep(o.stormPauseMillis);
            });
            // Slow readers: a small receive window read a little at a time, with a long pause halfway.
            repeat(o.slowReaders, "slow reader", seed -> {
                try (ChatSocket c = new ChatSocket(uri, ServeLoad.chatBody(o.model, o.slowMaxTokens, seed), 0)) {
                    int status = c.status();
                    count(status == 200 && c.readToEnd(() -> running ? 100 : 0, () -> running ? 5000 : 0), status,
                            "slow reader: status " + status);
                }
            });
            // Slow headers: one header line a second before the body, then a normal read.
            repeat(o.slowHeaders, "slow headers", seed -> {
                try (ChatSocket c = new ChatSocket(uri, ServeLoad.chatBody(o.model, o.maxTokens, seed), 1000)) {
                    int status = c.status();
                    count(status == 200 && c.readToEnd(() -> 0, () -> 0), status, "slow headers: status " + status);
                }
            });
        }

        private void count(boolean ok, int status, String error) {
            if (ok) {
                tally.completed.incrementAndGet();
            } else {
                tally.failed(status, error);
            }
        }

        private void repeat(int count, String kind, Client client) {
            for (int i = 0; i < count; i++) {
                threads.add(Thread.ofVirtual().name(kind + "-" + i).start(() -> {
                    while (running) {
                        try {
                            client.once(seeds.incrementAndGet());
                        } catch (Exception e) {
                            tally.error(kind + ": " + e);
                        }
                    }
                }));
            }
        }

        /** Lets every client finish the request it is on; false if some did not within the timeout. */
        boolean stop(Duration timeout) throws InterruptedException {
            running = false;
            long deadline = System.nanoTime() + timeout.toNanos();
            for (Thread t : threads) {
                if (!t.join(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())))) {
                    return false;
                }
            }
            return true;
        }
    }

    /** One chat request over a plain socket, so a client can hang up, read slowly or send its headers slowly. */
    static final class ChatSocket implements AutoCloseable {
        private static final byte[] DONE = "data: [DONE]".getBytes(StandardCharsets.US_ASCII);
        private static final byte[] ERROR_EVENT = "data: {\"error\"".getBytes(StandardCharsets.US_ASCII);
        private final Socket socket;
        private final InputStream in;
        private final ByteArrayOutputStream received = new ByteArrayOutputStream();

        ChatSocket(URI server, String body, long millisBetweenHeaders) throws IOException, InterruptedException {
            socket = new Socket();
            socket.setReceiveBufferSize(4096); // small window: a slow reader pushes back on the server soon
            socket.connect(new java.net.InetSocketAddress(server.getHost(), server.getPort()), 10_000);
            socket.setSoTimeout(120_000);
            in = socket.getInputStream();
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            List<String> head = List.of("POST /v1/chat/completions HTTP/1.1\r\n", "Host: " + server.getAuthority() + "\r\n",
                    "Content-Type: application/json\r\n", "Connection: close\r\n",
                    "Content-Length: " + bytes.length + "\r\n", "\r\n");
            OutputStream out = socket.getOutputStream();
            for (String line : head) {
                out.write(line.getBytes(StandardCharsets.US_ASCII));
                out.flush();
                Thread.sleep(millisBetweenHeaders);
            }
            out.write(bytes);
            out.flush();
        }

        /** The response's status code (reads the status line). */
        int status() throws IOException, InterruptedException {
            readUntil("\r\n", 0);
            String line = received.toString(StandardCharsets.US_ASCII);
            Matcher m = Pattern.compile("^HTTP/1\\.1 (\\d{3})").matcher(line);
            return m.find() ? Integer.parseInt(m.group(1)) : -1;
        }

        /** Reads until {@code marker} arrives (true) or the stream ends (false), pausing {@code pauseMillis} per read. */
        boolean readUntil(String marker, long pauseMillis) throws IOException, InterruptedException {
            byte[] buffer = new byte[512];
            while (!received.toString(StandardCharsets.UTF_8).contains(marker)) {
                int n = in.read(buffer);
                if (n < 0) {
                    return false;
                }
                received.write(buffer, 0, n);
                Thread.sleep(Math.max(0, pauseMillis));
            }
            return true;
        }

        /** Reads the whole response (pause per 512-byte read, one long pause after 16 KiB); true: [DONE], no error. */
        boolean readToEnd(java.util.function.LongSupplier pauseMillis, java.util.function.LongSupplier longPause)
                throws IOException, InterruptedException {
            byte[] buffer = new byte[512];
            boolean paused = false;
            for (int n; (n = in.read(buffer)) >= 0; ) {
                received.write(buffer, 0, n);
                if (!paused && received.size() > 16 * 1024) {
                    paused = true;
                    Thread.sleep(longPause.getAsLong());
                }
                Thread.sleep(pauseMillis.getAsLong());
            }
            byte[] all = received.toByteArray();
            return indexOf(all, DONE) >= 0 && indexOf(all, ERROR_EVENT) < 0;
        }

        private static int indexOf(byte[] haystack, byte[] needle) {
            outer:
            for (int i = 0; i + needle.length <= haystack.length; i++) {
                for (int j = 0; j < needle.length; j++) {
                    if (haystack[i + j] != needle[j]) {
                        continue outer;
                    }
                }
                return i;
            }
            return -1;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** Heap figures from the server's Prometheus metrics: sums over the heap pools, MiB. */
    record Heap(double usedMiB, double committedMiB) {
    }

    /** What the soak reads from the server process: RSS from /proc, heap from /q/metrics, live objects from jcmd. */
    static final class Server {
        private static final Pattern HEAP_METRIC =
                Pattern.compile("^jvm_memory_(used|committed)_bytes\\{area=\"heap\",[^}]*} (\\S+)$", Pattern.MULTILINE);
        private final HttpClient http = HttpClient.newHttpClient();
        private final String url;
        private final long pid;

        Server(String url, long pid) {
            this.url = url;
            this.pid = pid;
        }

        double rssMiB() throws IOException {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    return Long.parseLong(line.replaceAll("\\D", "")) / 1024.0;
                }
            }
            throw new IOException("no VmRSS for pid " + pid);
        }

        Heap heap() {
            try {
                String text = http.send(HttpRequest.newBuilder(URI.create(url + "/q/metrics")).build(),
                        HttpResponse.BodyHandlers.ofString()).body();
                double used = 0;
                double committed = 0;
                for (Matcher m = HEAP_METRIC.matcher(text); m.find(); ) {
                    double mib = Double.parseDouble(m.group(2)) / (1 << 20);
                    if (m.group(1).equals("used")) {
                        used += mib;
                    } else {
                        committed += mib;
                    }
                }
                return new Heap(used, committed);
            } catch (Exception e) {
                return new Heap(Double.NaN, Double.NaN);
            }
        }

        /** Live instances of each class after a full GC (jcmd's histogram collects first). */
        Map<String, Long> liveInstances(List<String> classes) throws IOException, InterruptedException {
            Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                    Long.toString(pid), "GC.class_histogram").redirectErrorStream(true).start();
            String histogram = new String(jcmd.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            jcmd.waitFor();
            Map<String, Long> counts = new java.util.LinkedHashMap<>();
            for (String name : classes) {
                Matcher m = Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+\\d+\\s+" + Pattern.quote(name) + "(\\s|$)",
                        Pattern.MULTILINE).matcher(histogram);
                counts.put(name, m.find() ? Long.parseLong(m.group(1)) : 0L);
            }
            return counts;
        }
    }

    record Sample(long seconds, double rssMiB, Heap heap, long completed, long errors, long refused, long disconnects) {
        String row() {
            return String.format("| %d | %.0f | %.0f | %.0f | %d | %d | %d | %d |", seconds, rssMiB, heap.usedMiB(),
                    heap.committedMiB(), completed, errors, refused, disconnects);
        }
    }

    /** The verdict: RSS after warm-up against ±10 % of its median, errors, and request objects left alive. */
    record Summary(Options o, List<Sample> samples, Tally tally, Map<String, Long> live, boolean drained,
                   double idleRssMiB) {
        void print() {
            double[] rss = samples.stream().filter(s -> s.seconds() > o.warmup()).mapToDouble(Sample::rssMiB).sorted()
                    .toArray();
            double min = rss.length > 0 ? rss[0] : Double.NaN;
            double max = rss.length > 0 ? rss[rss.length - 1] : Double.NaN;
            double median = rss.length > 0 ? rss[rss.length / 2] : Double.NaN;
            boolean flat = rss.length > 0 && max <= median * 1.10 && min >= median * 0.90;
            long elapsed = samples.isEmpty() ? 0 : samples.getLast().seconds();
            List<Sample> steady = samples.stream().filter(x -> x.seconds() > o.warmup()).toList();
            double slope = steady.size() > 1 ? (steady.getLast().rssMiB() - steady.getFirst().rssMiB())
                    / (steady.getLast().seconds() - steady.getFirst().seconds()) : Double.NaN;
            System.out.println("| measure | value |");
            System.out.println("|---|---|");
            System.out.printf("| RSS after %d s warm-up: min / median / max MiB | %.0f / %.0f / %.0f (%+.1f %% / %+.1f %%) |%n",
                    o.warmup(), min, median, max, (min / median - 1) * 100, (max / median - 1) * 100);
            System.out.printf("| RSS flat within ±10 %% of the median | %s |%n", flat ? "yes" : "NO");
            System.out.printf("| RSS drift after warm-up | %+.2f MiB/s |%n", slope);
            System.out.printf("| RSS idle, after the load | %.0f MiB |%n", idleRssMiB);
            Sample last = samples.isEmpty() ? new Sample(0, 0, new Heap(0, 0), 0, 0, 0, 0) : samples.getLast();
            System.out.printf("| completed requests / s | %d / %d (%.1f/s) |%n", last.completed(), elapsed,
                    elapsed > 0 ? last.completed() / (double) elapsed : 0);
            System.out.printf("| disconnects (hung up after the first chunk) | %d |%n", tally.disconnects.get());
            System.out.printf("| errors | %d%s |%n", tally.errors.get(),
                    tally.firstErrors.isEmpty() ? "" : " (first: " + String.join("; ", tally.firstErrors) + ")");
            System.out.printf("| refused with 503 (queue full) | %d |%n", tally.refused.get());
            System.out.printf("| clients finished their last request | %s |%n", drained ? "yes" : "NO (timed out)");
            live.forEach((name, count) -> System.out.printf("| live `%s` once idle | %d |%n", name, count));
        }
    }
}

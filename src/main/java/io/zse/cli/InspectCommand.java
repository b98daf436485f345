package io.zse.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.zse.format.SectionKind;
import io.zse.format.TensorInfo;
import io.zse.format.TensorType;
import io.zse.format.ZseFile;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code zse inspect}: prints what a .zse file holds and whether its checksums hold. */
@Command(name = "inspect", description = "Show the config, tensors and checksum status of a .zse file.")
public final class InspectCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "FILE", description = "The .zse file.")
    Path file;

    @Option(names = "--verify", description = "Also check every tensor's checksum (reads all weight bytes).")
    boolean verify;

    @Option(names = "--json", description = "Print one JSON object instead of text.")
    boolean json;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        long start = System.nanoTime();
        try (ZseFile zse = ZseFile.open(file)) {
            double openMs = (System.nanoTime() - start) / 1e6;
            if (verify) {
                zse.verify();
            }
            ObjectNode report = report(zse, mapper);
            report.put("open_ms", Math.round(openMs * 1000) / 1000.0);
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                out.println(mapper.writerWithDefaultPrettyPrinter().writeValueAsString(report));
            } else {
                printText(report, out);
            }
            out.flush();
        }
        return 0;
    }

    private ObjectNode report(ZseFile zse, ObjectMapper mapper) throws Exception {
        ObjectNode r = mapper.createObjectNode();
        r.put("file", zse.path().toString());
        r.put("format_version", zse.version());
        r.put("file_bytes", zse.fileSize());
        r.set("config", mapper.readTree(zse.configJson()));
        ArrayNode sections = r.putArray("sections");
        for (SectionKind kind : SectionKind.values()) {
            zse.section(kind).ifPresent(s -> sections.addObject().put("kind", kind.label()).put("bytes", s.byteSize()));
        }
        ArrayNode tensors = r.putArray("tensors");
        Map<TensorType, long[]> byType = new EnumMap<>(TensorType.class);
        long parameters = 0;
        long weightBytes = 0;
        for (TensorInfo t : zse.tensors()) {
            ObjectNode o = tensors.addObject();
            o.put("name", t.name());
            o.put("type", t.type().name());
            ArrayNode shape = o.putArray("shape");
            for (long d : t.shape()) {
                shape.add(d);
            }
            o.put("group_size", t.groupSize());
            long bytes = t.dataLength() + t.scalesLength();
            o.put("bytes", bytes);
            parameters += t.elementCount();
            weightBytes += bytes;
            long[] agg = byType.computeIfAbsent(t.type(), k -> new long[2]);
            agg[0]++;
            agg[1] += bytes;
        }
        ObjectNode totals = r.putObject("totals");
        totals.put("tensors", zse.tensors().size());
        totals.put("parameters", parameters);
        totals.put("weight_bytes", weightBytes);
        ObjectNode types = totals.putObject("by_type");
        byType.forEach((type, agg) -> types.putObject(type.name()).put("tensors", agg[0]).put("bytes", agg[1]));
        ObjectNode checks = r.putObject("checksums");
        checks.put("metadata", "ok");
        checks.put("tensors", verify ? "ok" : "not checked (use --verify)");
        return r;
    }

    private static void printText(JsonNode r, PrintWriter out) {
        out.printf("file       %s%n", r.get("file").asText());
        out.printf("format     %s, %s, opened and checked in %.3f ms%n", r.get("format_version").asText(),
                bytes(r.get("file_bytes").asLong()), r.get("open_ms").asDouble());
        out.println("config");
        for (Iterator<Map.Entry<String, JsonNode>> it = r.get("config").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            out.printf("  %-22s %s%n", e.getKey(), e.getValue());
        }
        out.println("sections");
        for (JsonNode s : r.get("sections")) {
            out.printf("  %-22s %s%n", s.get("kind").asText(), bytes(s.get("bytes").asLong()));
        }
        int width = 4;
        for (JsonNode t : r.get("tensors")) {
            width = Math.max(width, t.get("name").asText().length());
        }
        out.println("tensors");
        out.printf("  %-" + width + "s  %-6s  %-16s  %12s%n", "name", "type", "shape", "bytes");
        for (JsonNode t : r.get("tensors")) {
            String type = t.get("type").asText() + (t.get("group_size").asInt() > 0 ? "/" + t.get("group_size") : "");
            out.printf("  %-" + width + "s  %-6s  %-16s  %12d%n", t.get("name").asText(), type, t.get("shape"),
                    t.get("bytes").asLong());
        }
        JsonNode totals = r.get("totals");
        out.printf("totals     %d tensors, %,d parameters, %s of weights%n", totals.get("tensors").asInt(),
                totals.get("parameters").asLong(), bytes(totals.get("weight_bytes").asLong()));
        for (Iterator<Map.Entry<String, JsonNode>> it = totals.get("by_type").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            out.printf("  %-6s %4d tensors  %s%n", e.getKey(), e.getValue().get("tensors").asInt(),
                    bytes(e.getValue().get("bytes").asLong()));
        }
        JsonNode checks = r.get("checksums");
        out.printf("checksums  metadata %s; tensors %s%n", checks.get("metadata").asText(),
                checks.get("tensors").asText());
    }

    static String bytes(long n) {
        if (n < 1024) {
            return n + " B";
        }
        if (n < 1024 * 1024) {
            return String.format("%.1f KiB", n / 1024.0);
        }
        if (n < 1024L * 1024 * 1024) {
            return String.format("%.1f MiB", n / (1024.0 * 1024));
        }
        return String.format("%.2f GiB", n / (1024.0 * 1024 * 1024));
    }
}

package io.zse.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Knative Service manifest uses only fields that serving.knative.dev/v1 accepts (Knative validates a subset of the
 * Kubernetes PodSpec and rejects the rest), and autoscaling annotations Knative knows, with values it accepts.
 */
class KnativeServiceTest {
    /** Allowed keys per object, keyed by the path of the object with array indexes written as []. */
    private static final Map<String, Set<String>> FIELDS = Map.ofEntries(
            Map.entry("", Set.of("apiVersion", "kind", "metadata", "spec")),
            Map.entry("/metadata", Set.of("name", "namespace", "labels", "annotations")),
            Map.entry("/spec", Set.of("template", "traffic")),
            Map.entry("/spec/template", Set.of("metadata", "spec")),
            Map.entry("/spec/template/metadata", Set.of("name", "labels", "annotations")),
            Map.entry("/spec/template/spec", Set.of("containers", "volumes", "containerConcurrency", "timeoutSeconds",
                    "responseStartTimeoutSeconds", "idleTimeoutSeconds", "serviceAccountName", "imagePullSecrets",
                    "nodeSelector", "tolerations", "affinity", "enableServiceLinks", "runtimeClassName")),
            Map.entry("/spec/template/spec/containers/[]", Set.of("name", "image", "args", "command", "env", "envFrom",
                    "ports", "resources", "readinessProbe", "livenessProbe", "startupProbe", "volumeMounts",
                    "imagePullPolicy", "workingDir", "securityContext", "terminationMessagePath",
                    "terminationMessagePolicy")),
            Map.entry("/spec/template/spec/containers/[]/ports/[]", Set.of("name", "containerPort", "protocol")),
            Map.entry("/spec/template/spec/containers/[]/env/[]", Set.of("name", "value", "valueFrom")),
            Map.entry("/spec/template/spec/containers/[]/resources", Set.of("requests", "limits")),
            Map.entry("/spec/template/spec/containers/[]/resources/requests", Set.of("cpu", "memory", "nvidia.com/gpu")),
            Map.entry("/spec/template/spec/containers/[]/resources/limits", Set.of("cpu", "memory", "nvidia.com/gpu")),
            Map.entry("/spec/template/spec/containers/[]/readinessProbe", probeFields()),
            Map.entry("/spec/template/spec/containers/[]/livenessProbe", probeFields()),
            Map.entry("/spec/template/spec/containers/[]/readinessProbe/httpGet", Set.of("path", "port", "httpHeaders")),
            Map.entry("/spec/template/spec/containers/[]/livenessProbe/httpGet", Set.of("path", "port", "httpHeaders")),
            Map.entry("/spec/template/spec/containers/[]/volumeMounts/[]", Set.of("name", "mountPath", "readOnly",
                    "subPath")),
            Map.entry("/spec/template/spec/volumes/[]", Set.of("name", "persistentVolumeClaim", "configMap", "secret",
                    "projected", "emptyDir")),
            Map.entry("/spec/template/spec/volumes/[]/persistentVolumeClaim", Set.of("claimName", "readOnly")));
    /** Leaf maps whose keys are free-form. */
    private static final Set<String> FREE_FORM = Set.of("/metadata/labels", "/metadata/annotations",
            "/spec/template/metadata/labels", "/spec/template/metadata/annotations");
    private static final String AUTOSCALING = "autoscaling.knative.dev/";

    private static Set<String> probeFields() {
        return Set.of("httpGet", "tcpSocket", "grpc", "exec", "initialDelaySeconds", "periodSeconds", "timeoutSeconds",
                "successThreshold", "failureThreshold");
    }

    @Test
    void isAServingV1ServiceUsingOnlyFieldsKnativeAccepts() {
        JsonNode service = KnativeManifest.read();
        assertEquals("serving.knative.dev/v1", service.path("apiVersion").asText());
        assertEquals("Service", service.path("kind").asText());
        List<String> unknown = new ArrayList<>();
        check(service, "", unknown);
        assertEquals(List.of(), unknown, "fields serving.knative.dev/v1 does not accept");
    }

    @Test
    void scalesToZeroOnConcurrencyWithinTheContainerLimit() {
        JsonNode template = KnativeManifest.read().path("spec").path("template");
        JsonNode annotations = template.path("metadata").path("annotations");
        for (Iterator<String> names = annotations.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            assertTrue(Set.of("min-scale", "max-scale", "initial-scale", "scale-to-zero-pod-retention-period", "metric",
                    "target", "target-utilization-percentage", "window", "class").contains(
                    name.substring(AUTOSCALING.length())) && name.startsWith(AUTOSCALING), "unknown annotation " + name);
        }
        int min = annotations.path(AUTOSCALING + "min-scale").asInt(-1);
        int max = annotations.path(AUTOSCALING + "max-scale").asInt(-1);
        int target = annotations.path(AUTOSCALING + "target").asInt(-1);
        int containerConcurrency = template.path("spec").path("containerConcurrency").asInt(-1);
        assertEquals(0, min, "min-scale 0 lets the service scale to zero");
        assertTrue(max >= 1, "max-scale");
        assertEquals("concurrency", annotations.path(AUTOSCALING + "metric").asText());
        assertTrue(target > 0 && target <= containerConcurrency, "0 < target <= containerConcurrency");
        Duration retention = Duration.parse("PT" + annotations.path(AUTOSCALING + "scale-to-zero-pod-retention-period")
                .asText().toUpperCase());
        assertTrue(retention.toSeconds() > 0, "retention period is a duration");
    }

    @Test
    void requestsOneGpuAndProbesWithoutPorts() {
        JsonNode container = KnativeManifest.read().at("/spec/template/spec/containers/0");
        assertEquals("1", container.at("/resources/limits/nvidia.com~1gpu").asText(), "one GPU, as a limit");
        for (String probe : List.of("readinessProbe", "livenessProbe")) {
            // Knative routes probes through its queue-proxy to the serving port; a different port is rejected.
            assertTrue(container.path(probe).path("httpGet").path("port").isMissingNode(), probe + " names no port");
        }
        assertEquals(1, container.path("ports").size(), "Knative serves exactly one port");
    }

    private static void check(JsonNode node, String path, List<String> unknown) {
        if (node.isArray()) {
            node.forEach(element -> check(element, path + "/[]", unknown));
            return;
        }
        if (!node.isObject() || FREE_FORM.contains(path)) {
            return;
        }
        Set<String> allowed = FIELDS.get(path);
        for (Iterator<Map.Entry<String, JsonNode>> fields = node.fields(); fields.hasNext(); ) {
            Map.Entry<String, JsonNode> field = fields.next();
            if (allowed == null || !allowed.contains(field.getKey())) {
                unknown.add(path + "/" + field.getKey());
            } else {
                check(field.getValue(), path + "/" + field.getKey(), unknown);
            }
        }
    }
}

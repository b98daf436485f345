package io.zse.deploy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/** deploy/knative/service.yaml as a tree. */
final class KnativeManifest {
    static final Path FILE = DeployFiles.ROOT.resolve("deploy/knative/service.yaml");

    private KnativeManifest() {
    }

    static JsonNode read() {
        try {
            return new ObjectMapper(new YAMLFactory()).readTree(FILE.toFile());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}

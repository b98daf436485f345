package io.zse.generate.grammar;

/** A JSON schema this server cannot enforce, or one that breaks the rules of OpenAI's strict mode; names where. */
public final class SchemaException extends IllegalArgumentException {
    private final String path;
    private final String reason;

    SchemaException(String path, String reason) {
        super(reason + " (at " + path + ")");
        this.path = path;
        this.reason = reason;
    }

    /** What is wrong, without where. */
    public String reason() {
        return reason;
    }

    /** The JSON pointer, within the schema, of what was refused. */
    public String path() {
        return path;
    }
}

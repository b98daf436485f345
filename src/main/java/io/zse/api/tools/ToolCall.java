package io.zse.api.tools;

/**
 * One call the model made, as OpenAI reports it.
 *
 * @param arguments the arguments object as compact JSON text
 */
public record ToolCall(String id, String name, String arguments) {
}

package io.zse.tokenizer;

/**
 * A piece of text on its way to the model; {@code atOrigin} says it starts at offset 0 of the original input,
 * which Metaspace's "first" prepend scheme needs.
 */
record Piece(String text, boolean atOrigin) {
}

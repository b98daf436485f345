package io.zse.tokenizer.template;

/** One lexer token; {@code value} is the text for DATA/NAME/OPERATOR, the decoded value for STRING/INTEGER/FLOAT. */
record Token(Kind kind, Object value, int line) {
    enum Kind { DATA, VARIABLE_BEGIN, VARIABLE_END, BLOCK_BEGIN, BLOCK_END, NAME, STRING, INTEGER, FLOAT, OPERATOR, EOF }

    boolean is(Kind k) {
        return kind == k;
    }

    boolean isOperator(String op) {
        return kind == Kind.OPERATOR && value.equals(op);
    }

    boolean isName(String name) {
        return kind == Kind.NAME && value.equals(name);
    }

    String text() {
        return String.valueOf(value);
    }

    String describe() {
        return switch (kind) {
            case EOF -> "end of template";
            case DATA -> "template data";
            case VARIABLE_END -> "end of print statement";
            case BLOCK_END -> "end of statement block";
            case STRING -> PyRepr.repr(value);
            default -> "'" + value + "'";
        };
    }
}

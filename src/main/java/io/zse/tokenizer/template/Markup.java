package io.zse.tokenizer.template;

/** A string marked safe ({@code |safe}, {@code |escape}); like markupsafe.Markup, {@code +} escapes a plain string joined to it. */
record Markup(String text) {
    static String escape(String s) {
        StringBuilder out = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&#34;");
                case '\'' -> out.append("&#39;");
                default -> out.append(c);
            }
        }
        return out.toString();
    }

    @Override
    public String toString() {
        return text;
    }
}

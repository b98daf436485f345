package io.zse.api;

import io.restassured.RestAssured;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/** A raw socket to the test app, for requests no HTTP client will send: half headers, short bodies, bad chunks. */
final class RawHttp implements AutoCloseable {
    final Socket socket;

    RawHttp() throws IOException {
        socket = new Socket("localhost", RestAssured.port);
    }

    RawHttp send(String text) throws IOException {
        socket.getOutputStream().write(text.getBytes(StandardCharsets.UTF_8));
        socket.getOutputStream().flush();
        return this;
    }

    /** Ends the client's side (FIN), the server can still answer. */
    RawHttp finish() throws IOException {
        socket.shutdownOutput();
        return this;
    }

    /** Everything the server sends until it closes the connection; fails if that takes longer than the limit. */
    String readUntilClosed(int limitMillis) throws IOException {
        socket.setSoTimeout(limitMillis);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[4096];
        try {
            for (int n; (n = in.read(buffer)) >= 0; ) {
                out.write(buffer, 0, n);
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the server kept the connection open " + limitMillis + " ms; it sent: " + out, e);
        } catch (IOException e) {
            // a reset after the response is as good as a close
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}

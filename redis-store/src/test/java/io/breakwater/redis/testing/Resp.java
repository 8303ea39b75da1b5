package io.breakwater.redis.testing;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A minimal RESP client for test set-up (cluster creation, assertions); the code under test uses Redisson. */
final class Resp {

  private Resp() {}

  static String command(int port, String... args) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      socket.setSoTimeout(5000);
      OutputStream out = socket.getOutputStream();
      StringBuilder request = new StringBuilder("*").append(args.length).append("\r\n");
      for (String arg : args) {
        request.append('$').append(arg.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(arg)
            .append("\r\n");
      }
      out.write(request.toString().getBytes(StandardCharsets.UTF_8));
      out.flush();
      return read(new BufferedInputStream(socket.getInputStream()));
    } catch (IOException e) {
      throw new IllegalStateException("Redis on port " + port + " did not answer " + String.join(" ", args), e);
    }
  }

  private static String read(InputStream in) throws IOException {
    int type = in.read();
    String line = line(in);
    switch (type) {
      case '+', ':' -> {
        return line;
      }
      case '-' -> {
        return "ERR:" + line;
      }
      case '$' -> {
        int length = Integer.parseInt(line);
        if (length < 0) {
          return "(nil)";
        }
        byte[] data = in.readNBytes(length + 2);
        return new String(data, 0, length, StandardCharsets.UTF_8);
      }
      case '*' -> {
        int count = Integer.parseInt(line);
        StringBuilder all = new StringBuilder("[");
        for (int i = 0; i < count; i++) {
          all.append(i == 0 ? "" : ",").append(read(in));
        }
        return all.append(']').toString();
      }
      default -> throw new IOException("Unexpected RESP type " + (char) type);
    }
  }

  private static String line(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int c;
    while ((c = in.read()) != -1 && c != '\r') {
      line.append((char) c);
    }
    in.read();
    return line.toString();
  }
}

package io.breakwater.langchain4j;

import java.io.IOException;
import java.net.Authenticator;
import java.net.CookieHandler;
import java.net.ProxySelector;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;

/**
 * A JDK {@link HttpClient.Builder} whose clients hand each asynchronous request to the {@link Body} of the stream
 * that sends it, so that the stream can cancel the request before its response comes ({@code cancel(true)} on the
 * JDK's future aborts the exchange and closes its connection). Everything else is the JDK client's, unchanged. For
 * LangChain4j's {@code JdkHttpClientBuilder.httpClientBuilder(..)}, by {@link CancellableHttpClientBuilder}.
 */
final class CancellableJdkClientBuilder implements HttpClient.Builder {

  private final HttpClient.Builder builder;
  private final Supplier<CancellableHttpClientBuilder.Body> starting;

  CancellableJdkClientBuilder(HttpClient.Builder builder, Supplier<CancellableHttpClientBuilder.Body> starting) {
    this.builder = builder;
    this.starting = starting;
  }

  @Override
  public HttpClient build() {
    HttpClient client = builder.build();
    return new HttpClient() {
      @Override
      public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request,
          HttpResponse.BodyHandler<T> handler) {
        CompletableFuture<HttpResponse<T>> response = client.sendAsync(request, handler);
        CancellableHttpClientBuilder.Body body = starting.get();
        if (body == null) {
          return response;
        }
        body.requested(response);
        return response.thenApply(r -> {
          body.responded(r.headers().map());   // LangChain4j keeps no headers: Retry-After is read from these
          return r;
        });
      }

      @Override
      public <T> CompletableFuture<HttpResponse<T>> sendAsync(HttpRequest request, HttpResponse.BodyHandler<T> handler,
          HttpResponse.PushPromiseHandler<T> pushPromiseHandler) {
        return client.sendAsync(request, handler, pushPromiseHandler);
      }

      @Override
      public <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler)
          throws IOException, InterruptedException {
        return client.send(request, handler);
      }

      @Override
      public Optional<CookieHandler> cookieHandler() {
        return client.cookieHandler();
      }

      @Override
      public Optional<Duration> connectTimeout() {
        return client.connectTimeout();
      }

      @Override
      public Redirect followRedirects() {
        return client.followRedirects();
      }

      @Override
      public Optional<ProxySelector> proxy() {
        return client.proxy();
      }

      @Override
      public SSLContext sslContext() {
        return client.sslContext();
      }

      @Override
      public SSLParameters sslParameters() {
        return client.sslParameters();
      }

      @Override
      public Optional<Authenticator> authenticator() {
        return client.authenticator();
      }

      @Override
      public Version version() {
        return client.version();
      }

      @Override
      public Optional<Executor> executor() {
        return client.executor();
      }
    };
  }

  @Override
  public HttpClient.Builder cookieHandler(CookieHandler cookieHandler) {
    builder.cookieHandler(cookieHandler);
    return this;
  }

  @Override
  public HttpClient.Builder connectTimeout(Duration duration) {
    builder.connectTimeout(duration);
    return this;
  }

  @Override
  public HttpClient.Builder sslContext(SSLContext sslContext) {
    builder.sslContext(sslContext);
    return this;
  }

  @Override
  public HttpClient.Builder sslParameters(SSLParameters sslParameters) {
    builder.sslParameters(sslParameters);
    return this;
  }

  @Override
  public HttpClient.Builder executor(Executor executor) {
    builder.executor(executor);
    return this;
  }

  @Override
  public HttpClient.Builder followRedirects(HttpClient.Redirect policy) {
    builder.followRedirects(policy);
    return this;
  }

  @Override
  public HttpClient.Builder version(HttpClient.Version version) {
    builder.version(version);
    return this;
  }

  @Override
  public HttpClient.Builder priority(int priority) {
    builder.priority(priority);
    return this;
  }

  @Override
  public HttpClient.Builder proxy(ProxySelector proxySelector) {
    builder.proxy(proxySelector);
    return this;
  }

  @Override
  public HttpClient.Builder authenticator(Authenticator authenticator) {
    builder.authenticator(authenticator);
    return this;
  }
}

package io.breakwater.internal;

/**
 * The private keys under which Breakwater keeps its state in the Reactor {@code Context}. Not API: read the values
 * through their public types (e.g. {@link io.breakwater.deadline.Deadline#from}).
 */
public final class ContextKeys {

  private ContextKeys() {}

  /** The {@link io.breakwater.deadline.Deadline} in force. */
  public static final Object DEADLINE = new Key("breakwater.deadline");

  private record Key(String name) {
    @Override
    public String toString() {
      return name;
    }
  }
}

package io.breakwater.internal;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Handles on the private fields through which an API type keeps its machinery (a breaker's state machine, a policy's
 * background completions) without a method that exposes it, for the implementation class that runs it.
 */
public final class PrivateFields {

  private PrivateFields() {}

  /**
   * A handle on {@code owner}'s private field {@code name} of type {@code type}. Keep it in a static final constant:
   * a read through a constant handle on a final field costs what a field read does.
   *
   * @throws ExceptionInInitializerError if {@code owner} has no such field, so a renamed field fails the class
   *     initialiser that asks for it, not a later call
   */
  public static VarHandle handle(Class<?> owner, String name, Class<?> type) {
    try {
      return MethodHandles.privateLookupIn(owner, MethodHandles.lookup()).findVarHandle(owner, name, type);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }
}

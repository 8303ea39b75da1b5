package io.breakwater.internal;

import java.util.Objects;
import java.util.function.Function;

/**
 * The operators that a factory makes from a value user code passes anew on every call ({@code withDeadline(
 * Duration.ofSeconds(10))}, {@code retryWithBudget(Backoff.fullJitter(..))}, written inside the method that makes
 * each call): equal values get the same operator, so that building the chain per call makes none. Only stateless,
 * immutable operators whose every setting the key determines may be kept here.
 *
 * <p>A small direct-mapped table: each key has one slot, a value of another key in it is replaced. Reads and writes
 * take no lock; an entry's fields are final, so a thread that reads a slot sees its entry whole, and a missed write
 * only makes an operator again. Keys must have value equality ({@code equals} and {@code hashCode}).
 */
public final class AssemblyCache<K, V> {

  private static final int SLOTS = 16;

  private record Entry<K, V>(K key, V value) {}

  private final Entry<?, ?>[] slots = new Entry<?, ?>[SLOTS];
  private final Function<? super K, ? extends V> make;

  /** @param make what to make for a key seen for the first time; it validates the key and may throw */
  public AssemblyCache(Function<? super K, ? extends V> make) {
    this.make = Objects.requireNonNull(make, "make");
  }

  /** The operator for {@code key}: the one made for an equal key, if still kept, else a new one, then kept. */
  @SuppressWarnings("unchecked")   // an entry in a slot was put there by this method, with a K and a V
  public V get(K key) {
    int h = key.hashCode();
    int i = (h ^ (h >>> 16)) & (SLOTS - 1);
    Entry<?, ?> e = slots[i];
    if (e != null && e.key().equals(key)) {
      return (V) e.value();
    }
    V made = make.apply(key);
    slots[i] = new Entry<>(key, made);
    return made;
  }
}

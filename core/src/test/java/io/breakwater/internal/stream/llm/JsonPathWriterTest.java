package io.breakwater.internal.stream.llm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

class JsonPathWriterTest {

  @Test
  void valuesAtPathsInDocumentOrderJoinIntoTheObjectsJson() throws Exception {
    JsonPathWriter w = new JsonPathWriter();
    String json = w.string("$.a.b", "x\"", true) + w.string("$.a.b", "y\n", false) + w.value("$.a.c", "1")
        + w.string("$.list[0].k", "v", false) + w.value("$.list[1]", "true") + w.value("$['dotted.key']", "null")
        + w.value("$.nested[0][0]", "2.5") + w.close();
    assertThat(json).isEqualTo("{\"a\":{\"b\":\"x\\\"y\\n\",\"c\":1},\"list\":[{\"k\":\"v\"},true],"
        + "\"dotted.key\":null,\"nested\":[[2.5]]}");
    assertThat(new ObjectMapper().readTree(json).path("a").path("b").asText()).isEqualTo("x\"y\n");
  }

  @Test
  void nothingWrittenClosesAsAnEmptyObject() {
    assertThat(new JsonPathWriter().close()).isEqualTo("{}");
  }

  @Test
  void aStringLeftOpenIsClosedByTheNextPathOrTheEnd() {
    JsonPathWriter w = new JsonPathWriter();
    assertThat(w.string("$.a", "open", true) + w.value("$.b", "1") + w.string("$.c", "end", true) + w.close())
        .isEqualTo("{\"a\":\"open\",\"b\":1,\"c\":\"end\"}");
  }

  @Test
  void pathsThatCannotBeWrittenInOrderAreRefused() {
    JsonPathWriter w = new JsonPathWriter();
    w.value("$.a.b", "1");
    w.value("$.c", "2");
    assertThatThrownBy(() -> w.value("$.a.d", "3")).hasMessageContaining("given twice");
    assertThatThrownBy(() -> new JsonPathWriter().value("$[0]", "1")).hasMessageContaining("an object");
    JsonPathWriter list = new JsonPathWriter();
    list.value("$.l[0]", "1");
    assertThatThrownBy(() -> list.value("$.l[2]", "1")).hasMessageContaining("index 1 comes next");
    assertThatThrownBy(() -> list.value("$.l.k", "1")).hasMessageContaining("into an array");
  }

  @Test
  void malformedPathsAreRefused() {
    for (String path : List.of("", "$", "a.b", "$.", "$..a", "$[x]", "$['a]", "$[12345678901]", "$a")) {
      assertThatThrownBy(() -> JsonPathWriter.parse(path)).as(path).isInstanceOf(IllegalArgumentException.class);
    }
    assertThat(JsonPathWriter.parse("$.a[3]['b c'][\"d\"]")).containsExactly("a", 3, "b c", "d");
  }
}

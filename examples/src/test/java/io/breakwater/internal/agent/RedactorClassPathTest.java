package io.breakwater.internal.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The Redactor reads tool arguments the same way whatever jars an application brings. This module's class path holds
 * jackson-module-kotlin (through Spring AI and the OpenAI SDK), which core's does not: a Redactor that took every
 * module found on the class path read arguments through Kotlin reflection, which loads metadata from jar files at the
 * first failed tool call, on whichever thread that happened (an event loop, under BlockHound an error inside a static
 * initialiser that left Kotlin's classes unusable for the rest of the test JVM).
 */
class RedactorClassPathTest {

  record Payment(String account, Optional<String> password) {
  }

  @Test
  void argumentsAreReadWithJavaTimeAndOptionalOnlyWhateverModulesTheClassPathOffers() throws ClassNotFoundException {
    Class.forName("com.fasterxml.jackson.module.kotlin.KotlinModule");   // on this class path, offered by a ServiceLoader

    assertThat(Redactor.argumentModules())
        .containsExactlyInAnyOrder(new JavaTimeModule().getTypeId(), new Jdk8Module().getTypeId());
  }

  @Test
  void aSecretInAnOptionalArgumentIsMaskedWhereTheErrorEchoesIt() {
    Redactor redactor = new Redactor(List.of());

    String reason = redactor.redactText("card refused for hunter2-secret",
        Map.of("payment", new Payment("acct-77", Optional.of("hunter2-secret"))));

    assertThat(reason).isEqualTo("card refused for " + Redactor.MASK);
  }
}

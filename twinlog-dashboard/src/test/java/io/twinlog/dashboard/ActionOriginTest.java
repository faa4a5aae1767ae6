package io.twinlog.dashboard;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Actions are taken only at the dashboard's own address and from its own page (DNS rebinding). */
@Timeout(10)
class ActionOriginTest {
    private static final ActionOrigin LOOPBACK = new ActionOrigin("127.0.0.1", 8080);

    private static void accepted(ActionOrigin origin, String host, String originHeader) {
        assertEquals(Optional.empty(), origin.refusal(host, originHeader), host + ", Origin " + originHeader);
    }

    private static void refused(ActionOrigin origin, String host, String originHeader, String fragment) {
        Optional<String> refusal = origin.refusal(host, originHeader);
        assertTrue(refusal.isPresent() && refusal.get().contains(fragment) && !refusal.get().contains("\n"),
                host + ", Origin " + originHeader + ": " + refusal);
    }

    @Test
    void theListenersAddressFromItsOwnPage() {
        accepted(LOOPBACK, "127.0.0.1:8080", null);
        accepted(LOOPBACK, "127.0.0.1:8080", "http://127.0.0.1:8080");
        accepted(new ActionOrigin("dashboard.example", 8080), "Dashboard.Example:8080", "http://dashboard.example:8080");
        accepted(new ActionOrigin("10.0.0.5", 8080), "10.0.0.5:8080", "http://10.0.0.5:8080");
    }

    @Test
    void aLoopbackListenerBySpellingsOfLoopback() {
        for (String host : new String[] {"localhost:8080", "127.0.0.1:8080", "[::1]:8080"}) {
            accepted(LOOPBACK, host, "http://" + host);
            accepted(new ActionOrigin("localhost", 8080), host, null);
            accepted(new ActionOrigin("::1", 8080), host, null);
        }
        refused(LOOPBACK, "10.0.0.5:8080", null, "is not this dashboard's address (127.0.0.1:8080)");
    }

    @Test
    void aRebindingPageIsRefusedByItsHostName() {
        refused(LOOPBACK, "attacker.example:8080", "http://attacker.example:8080", "DNS rebinding");
        refused(LOOPBACK, "attacker.example:8080", null, "DNS rebinding");
        refused(new ActionOrigin("0.0.0.0", 8080), "attacker.example:8080", null, "DNS rebinding");
        refused(new ActionOrigin("dashboard.example", 8080), "localhost:8080", null, "DNS rebinding");
    }

    @Test
    void anotherPortIsAnotherSite() {
        refused(LOOPBACK, "127.0.0.1:9090", null, "is not");
        refused(LOOPBACK, "127.0.0.1", null, "is not");
        accepted(new ActionOrigin("127.0.0.1", 80), "127.0.0.1", "http://127.0.0.1");
        refused(LOOPBACK, "127.0.0.1:8080x", null, "is not");
    }

    @Test
    void aRequestFromAnotherPageIsRefusedByItsOrigin() {
        refused(LOOPBACK, "127.0.0.1:8080", "http://attacker.example", "comes from the page of http://attacker.example");
        refused(LOOPBACK, "127.0.0.1:8080", "null", "comes from the page of null");
        refused(LOOPBACK, "127.0.0.1:8080", "https://127.0.0.1:8080", "comes from the page of");
        refused(LOOPBACK, "localhost:8080", "http://127.0.0.1:8080", "comes from the page of");
    }

    @Test
    void aWildcardListenerByAnyAddressButNoName() {
        ActionOrigin any = new ActionOrigin("0.0.0.0", 8080);
        accepted(any, "192.168.1.20:8080", "http://192.168.1.20:8080");
        accepted(any, "[fd00::20]:8080", null);
        accepted(any, "localhost:8080", null);
        accepted(new ActionOrigin("::", 8080), "10.1.2.3:8080", null);
        refused(any, "999.1.1.1:8080", null, "is not");
        refused(any, "[not-an-address]:8080", null, "is not");
    }

    @Test
    void aMissingOrBrokenHostIsRefused() {
        refused(LOOPBACK, null, null, "need a Host header");
        refused(LOOPBACK, " ", null, "need a Host header");
        refused(LOOPBACK, "[::1:8080", null, "is not");
    }
}

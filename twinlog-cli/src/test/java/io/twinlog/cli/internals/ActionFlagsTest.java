package io.twinlog.cli.internals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link ActionFlags}: the flags given, in the order an error names them. */
@Timeout(60)
class ActionFlagsTest {
    @Test
    void theFlagsGivenAreListedInAFixedOrderWhateverTheCommandLinesOrder() {
        ActionFlags flags = new ActionFlags();
        assertEquals(List.of(), flags.given());
        flags.listAcls = true;
        flags.remove = true;
        flags.create = true;
        flags.alter = true;
        assertEquals(List.of("--create", "--alter", "--remove", "--list-acls"), flags.given());
    }

    @Test
    void fullAndSourceCommandConfigAreOptionsNotActions() {
        ActionFlags flags = new ActionFlags();
        flags.full = true;
        assertEquals(List.of(), flags.given());
        assertFalse(flags.isVerify());
        flags.verify = true;
        assertTrue(flags.isVerify());
        assertEquals(List.of("--verify"), flags.given());
    }
}

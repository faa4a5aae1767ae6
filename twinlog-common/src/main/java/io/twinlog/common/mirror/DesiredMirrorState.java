package io.twinlog.common.mirror;

/** What the operator asked for a mirror topic (per topic, set by start/stop/pause/resume and auto-discovery). */
public enum DesiredMirrorState {
    MIRRORING,
    PAUSED,
    STOPPED
}

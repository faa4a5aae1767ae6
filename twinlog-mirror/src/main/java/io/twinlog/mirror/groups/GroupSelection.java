package io.twinlog.mirror.groups;

import io.twinlog.mirror.store.MirrorDefinition;

import java.util.List;
import java.util.regex.Pattern;

/**
 * Which consumer groups a mirror syncs: a group ID that matches (as a whole) one include pattern and no exclude
 * pattern, like the topic patterns. No include pattern selects no group. Immutable; the patterns were validated when
 * the mirror's configs were set.
 */
public final class GroupSelection {
    private final List<Pattern> include;
    private final List<Pattern> exclude;

    private GroupSelection(List<String> include, List<String> exclude) {
        this.include = include.stream().map(Pattern::compile).toList();
        this.exclude = exclude.stream().map(Pattern::compile).toList();
    }

    public static GroupSelection of(List<String> include, List<String> exclude) {
        return new GroupSelection(include, exclude);
    }

    public static GroupSelection of(MirrorDefinition mirror) {
        return of(mirror.groupIncludePatterns(), mirror.groupExcludePatterns());
    }

    /** True when no group can match (the sync is off). */
    public boolean selectsNothing() {
        return include.isEmpty();
    }

    public boolean matches(String groupId) {
        return include.stream().anyMatch(p -> p.matcher(groupId).matches())
                && exclude.stream().noneMatch(p -> p.matcher(groupId).matches());
    }
}

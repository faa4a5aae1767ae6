package io.twinlog.server.handlers;

import io.twinlog.protocol.RequestHandler;
import io.twinlog.server.security.ScramUsers;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AlterUserScramCredentialsRequest;
import org.apache.kafka.common.requests.AlterUserScramCredentialsResponse;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsRequest;
import org.apache.kafka.common.requests.DescribeUserScramCredentialsResponse;
import org.apache.kafka.common.security.scram.ScramCredential;
import org.apache.kafka.common.security.scram.internals.ScramFormatter;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * DescribeUserScramCredentials and AlterUserScramCredentials (issue 13, point 2), answered as Kafka 4.4 answers
 * them, over {@link ScramUsers}: what {@code kafka-configs --entity-type users --add-config
 * 'SCRAM-SHA-256=[password=...]'} and {@code --describe} use. The client salts the password; the broker derives the
 * stored and server keys with Kafka's {@code ScramFormatter} and keeps only those. A user's changes in one request
 * are applied together or not at all.
 */
public final class ScramCredentialsHandlers {
    private static final Logger log = LoggerFactory.getLogger(ScramCredentialsHandlers.class);

    private final ScramUsers users;

    public ScramCredentialsHandlers(ScramUsers users) {
        this.users = users;
    }

    /** In memory: safe on a request thread. */
    public RequestHandler describe() {
        return request -> {
            DescribeUserScramCredentialsRequest body = request.body();
            Map<String, Map<String, Integer>> known = users.describe();
            DescribeUserScramCredentialsResponseData data = new DescribeUserScramCredentialsResponseData();
            List<String> asked = new ArrayList<>();
            if (body.data().users() == null || body.data().users().isEmpty()) {
                asked.addAll(known.keySet());
            } else {
                body.data().users().forEach(u -> asked.add(u.name()));
            }
            Set<String> seen = new HashSet<>();
            Set<String> duplicates = new HashSet<>();
            asked.forEach(u -> {
                if (!seen.add(u)) {
                    duplicates.add(u);
                }
            });
            Set<String> answered = new HashSet<>();
            for (String user : asked) {
                if (!answered.add(user)) {
                    continue;
                }
                DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult result =
                        new DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult().setUser(user);
                Map<String, Integer> credentials = known.get(user);
                if (duplicates.contains(user)) {
                    result.setErrorCode(Errors.DUPLICATE_RESOURCE.code()).setErrorMessage("Cannot describe SCRAM "
                            + "credentials for the same user twice in a single request: " + user);
                } else if (credentials == null || credentials.isEmpty()) {
                    result.setErrorCode(Errors.RESOURCE_NOT_FOUND.code()).setErrorMessage("Attempt to describe a "
                            + "user credential that does not exist: " + user);
                } else {
                    credentials.forEach((mechanism, iterations) -> result.credentialInfos().add(
                            new DescribeUserScramCredentialsResponseData.CredentialInfo()
                                    .setMechanism(ScramMechanism.forMechanismName(mechanism).type())
                                    .setIterations(iterations)));
                }
                data.results().add(result);
            }
            request.respond(new DescribeUserScramCredentialsResponse(data));
        };
    }

    /** Writes ZooKeeper: register it off request threads. */
    public RequestHandler alter() {
        return request -> {
            AlterUserScramCredentialsRequest body = request.body();
            Map<String, List<Change>> byUser = new LinkedHashMap<>();
            for (AlterUserScramCredentialsRequestData.ScramCredentialDeletion d : body.data().deletions()) {
                byUser.computeIfAbsent(d.name(), u -> new ArrayList<>()).add(new Change(d.mechanism(), null));
            }
            for (AlterUserScramCredentialsRequestData.ScramCredentialUpsertion u : body.data().upsertions()) {
                byUser.computeIfAbsent(u.name(), n -> new ArrayList<>()).add(new Change(u.mechanism(), u));
            }
            AlterUserScramCredentialsResponseData data = new AlterUserScramCredentialsResponseData();
            Map<String, Map<String, Integer>> known = users.describe();
            for (Map.Entry<String, List<Change>> e : byUser.entrySet()) {
                data.results().add(alterUser(e.getKey(), e.getValue(), known.getOrDefault(e.getKey(), Map.of())));
            }
            request.respond(new AlterUserScramCredentialsResponse(data));
        };
    }

    /** One requested change: {@code upsertion} null for a deletion. */
    private record Change(byte mechanism, AlterUserScramCredentialsRequestData.ScramCredentialUpsertion upsertion) {
    }

    private AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult alterUser(
            String user, List<Change> changes, Map<String, Integer> existing) {
        AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult result =
                new AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult().setUser(user);
        Map<String, Optional<ScramCredential>> writes = new LinkedHashMap<>();
        for (Change c : changes) {
            Optional<ScramMechanism> mechanism = mechanism(c.mechanism());
            Optional<Refusal> refusal = refusal(user, c, mechanism, existing, writes.keySet());
            if (refusal.isPresent()) {
                return result.setErrorCode(refusal.get().error().code()).setErrorMessage(refusal.get().message());
            }
            try {
                writes.put(mechanism.get().mechanismName(), c.upsertion() == null ? Optional.empty()
                        : Optional.of(credential(mechanism.get(), c.upsertion())));
            } catch (GeneralSecurityException ex) {
                // the client's salted password does not make a key: its error, answered to it
                return result.setErrorCode(Errors.UNACCEPTABLE_CREDENTIAL.code()).setErrorMessage(ex.toString());
            }
        }
        try {
            for (Map.Entry<String, Optional<ScramCredential>> w : writes.entrySet()) {
                if (!users.write(user, w.getKey(), w.getValue())) {
                    return result.setErrorCode(Errors.RESOURCE_NOT_FOUND.code()).setErrorMessage("Attempt to delete "
                            + "a user credential that does not exist");
                }
            }
            log.info("SCRAM credentials of user {}: {}", user, writes.entrySet().stream()
                    .map(w -> w.getKey() + (w.getValue().isPresent() ? " set" : " removed")).toList());
            return result;
        } catch (Exception ex) {
            // broad: a failure of any kind is this user's error answer, the others go on
            log.error("Could not write the SCRAM credentials of user {}", user, ex);
            return result.setErrorCode(Errors.forException(ex).code()).setErrorMessage(ex.toString());
        }
    }

    /** Why a change is refused, with Kafka's error and message. */
    private record Refusal(Errors error, String message) {
    }

    private static Optional<Refusal> refusal(String user, Change c, Optional<ScramMechanism> known,
                                             Map<String, Integer> existing, Set<String> alreadyChanged) {
        if (user.isEmpty()) {
            return Optional.of(new Refusal(Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"));
        }
        if (known.isEmpty()) {
            return Optional.of(new Refusal(Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"));
        }
        ScramMechanism mechanism = known.get();
        if (alreadyChanged.contains(mechanism.mechanismName())) {
            return Optional.of(new Refusal(Errors.DUPLICATE_RESOURCE,
                    "A user credential cannot be altered twice in the same request"));
        }
        if (c.upsertion() == null) {
            return existing.containsKey(mechanism.mechanismName()) ? Optional.empty()
                    : Optional.of(new Refusal(Errors.RESOURCE_NOT_FOUND,
                    "Attempt to delete a user credential that does not exist"));
        }
        if (c.upsertion().iterations() < mechanism.minIterations()) {
            return Optional.of(new Refusal(Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations"));
        }
        if (c.upsertion().iterations() > mechanism.maxIterations()) {
            return Optional.of(new Refusal(Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations"));
        }
        return Optional.empty();
    }

    private static ScramCredential credential(ScramMechanism mechanism,
                                              AlterUserScramCredentialsRequestData.ScramCredentialUpsertion u)
            throws GeneralSecurityException {
        return new ScramFormatter(mechanism).generateCredential(u.salt(), u.saltedPassword(), u.iterations());
    }

    /** The SCRAM mechanism of a wire byte (the type the admin API sends), if it names one. */
    private static Optional<ScramMechanism> mechanism(byte type) {
        return Arrays.stream(ScramMechanism.values()).filter(m -> m.type() == type).findFirst();
    }
}

package io.twinlog.server.security;

import io.twinlog.clients.mirror.ClusterMirrorResource;
import io.twinlog.clients.mirror.MirrorApi;
import io.twinlog.common.BrokerConfig;
import io.twinlog.common.metrics.BrokerMetrics;
import org.apache.curator.framework.CuratorFramework;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.metrics.internals.PluginMetricsImpl;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.Resource;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.utils.Utils;
import org.apache.kafka.metadata.authorizer.StandardAuthorizer;
import org.apache.kafka.security.authorizer.AclEntry;
import org.apache.kafka.server.authorizer.Action;
import org.apache.kafka.server.authorizer.AuthorizableRequestContext;
import org.apache.kafka.server.authorizer.AuthorizationResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The broker's authorizer (issue 13, point 3; decision 48): Kafka's {@link StandardAuthorizer} hosted as is, fed with
 * the ACLs of {@link AclStore}, configured with Kafka's {@code super.users} and
 * {@code allow.everyone.if.no.acl.found}. Without {@code authorizer.class.name} every request is allowed, as on a
 * Kafka broker without an authorizer. Checks are in memory: safe on request threads.
 */
public final class BrokerAuthorization implements AutoCloseable {
    public static final String STANDARD_AUTHORIZER = StandardAuthorizer.class.getName();
    private static final String AUTHORIZER_CONFIG = "authorizer.class.name";
    /** Kafka's authorizer audit logger: the decisions on Twinlog's own APIs go to it too. */
    private static final Logger AUDIT = LoggerFactory.getLogger("kafka.authorizer.logger");

    private final Optional<StandardAuthorizer> authorizer;
    /** ClusterMirror ACLs, with the mirror's name as a TOPIC resource (see {@link AclStore}). */
    private final Optional<StandardAuthorizer> mirrorAuthorizer;
    private final Optional<AclStore> store;

    private BrokerAuthorization(Optional<StandardAuthorizer> authorizer, Optional<StandardAuthorizer> mirrorAuthorizer,
                                Optional<AclStore> store) {
        this.authorizer = authorizer;
        this.mirrorAuthorizer = mirrorAuthorizer;
        this.store = store;
    }

    /** @throws ConfigException for an authorizer other than Kafka's StandardAuthorizer */
    public static BrokerAuthorization start(BrokerConfig config, CuratorFramework zk, BrokerMetrics metrics) {
        String className = config.authorizerClassName();
        if (className.isBlank()) {
            return new BrokerAuthorization(Optional.empty(), Optional.empty(), Optional.empty());
        }
        if (!className.equals(STANDARD_AUTHORIZER)) {
            throw new ConfigException(BrokerConfig.AUTHORIZER_CLASS_NAME, className, "Twinlog hosts Kafka's "
                    + STANDARD_AUTHORIZER + " (ACLs kept in ZooKeeper); other authorizers are not supported");
        }
        StandardAuthorizer authorizer = newAuthorizer(config, "kafka", metrics.kafkaMetrics());
        StandardAuthorizer mirrorAuthorizer = newAuthorizer(config, "cluster-mirror", metrics.kafkaMetrics());
        AclStore store = new AclStore(zk, authorizer, mirrorAuthorizer);
        store.start();
        return new BrokerAuthorization(Optional.of(authorizer), Optional.of(mirrorAuthorizer), Optional.of(store));
    }

    private static StandardAuthorizer newAuthorizer(BrokerConfig config, String role, Metrics metrics) {
        StandardAuthorizer authorizer = new StandardAuthorizer();
        Map<String, Object> configs = new HashMap<>(config.originals());
        configs.put("node.id", Integer.toString(config.brokerId()));
        authorizer.configure(configs);
        // the authorizer counts its decisions (a Monitorable plugin, as Kafka's broker hosts it), in the broker's
        // metrics: kafka.server:type=plugins,config=authorizer.class.name,... over JMX and Prometheus
        authorizer.withPluginMetrics(new PluginMetricsImpl(metrics, Map.of("config", AUTHORIZER_CONFIG,
                "class", StandardAuthorizer.class.getSimpleName(), "role", role)));
        return authorizer;
    }

    public boolean enabled() {
        return authorizer.isPresent();
    }

    /** The ACL store, when an authorizer is configured. */
    public Optional<AclStore> store() {
        return store;
    }

    /** The authorizer itself (DescribeAcls reads it), when configured. */
    public Optional<StandardAuthorizer> authorizer() {
        return authorizer;
    }

    /** Whether the request's principal may {@code operation} the literal resource; always without an authorizer. */
    public boolean allowed(AuthorizableRequestContext context, AclOperation operation, ResourceType type, String name) {
        return allowed(context, operation, type, name, true);
    }

    /**
     * As {@link #allowed(AuthorizableRequestContext, AclOperation, ResourceType, String)}; with {@code logIfDenied}
     * false a denial is not written to the audit log, as Kafka does where a denial is not a failure: one of several
     * ways to be allowed (CREATE on the cluster, else on the topic), or a listing that leaves out what the principal
     * may not see.
     */
    public boolean allowed(AuthorizableRequestContext context, AclOperation operation, ResourceType type, String name,
                           boolean logIfDenied) {
        return authorizer.isEmpty() || decide(authorizer.get(), context, operation,
                new ResourcePattern(type, name, PatternType.LITERAL), type.name(), logIfDenied);
    }

    /** {@code operation} on the cluster as one of several ways to be allowed: a denial is not logged. */
    public boolean allowedOnClusterQuietly(AuthorizableRequestContext context, AclOperation operation) {
        return allowed(context, operation, ResourceType.CLUSTER, Resource.CLUSTER_NAME, false);
    }

    /**
     * Whether the principal may {@code operation} the cluster mirror named {@code mirror} (KIP-1279's ClusterMirror
     * resource); always without an authorizer.
     */
    public boolean allowedOnMirror(AuthorizableRequestContext context, AclOperation operation, String mirror) {
        return mirrorAuthorizer.isEmpty() || decide(mirrorAuthorizer.get(), context, operation,
                new ResourcePattern(ResourceType.TOPIC, mirror, PatternType.LITERAL), ClusterMirrorResource.NAME, true);
    }

    /**
     * One decision. Kafka's authorizer writes its audit line (logger {@code kafka.authorizer.logger}) naming the
     * request by its Kafka API key; for a Twinlog API (mirror APIs, keys 7000+) it cannot, so the line is written
     * here, in the same form, with the mirror API's name.
     */
    private static boolean decide(StandardAuthorizer authorizer, AuthorizableRequestContext context,
                                  AclOperation operation, ResourcePattern resource, String resourceType,
                                  boolean logIfDenied) {
        boolean kafkaRequest = ApiKeys.hasId(context.requestType());
        Action action = new Action(operation, resource, 1, kafkaRequest, kafkaRequest && logIfDenied);
        boolean allowed = authorizer.authorize(context, List.of(action)).get(0) == AuthorizationResult.ALLOWED;
        if (!kafkaRequest && ((!allowed && logIfDenied) || AUDIT.isDebugEnabled())) {
            String request = MirrorApi.forId((short) context.requestType()).map(api -> api.name)
                    .orElse("API " + context.requestType());
            String line = "Principal = " + context.principal() + " is " + (allowed ? "Allowed" : "Denied")
                    + " operation = " + operation + " from host = " + context.clientAddress().getHostAddress()
                    + " on resource = " + resourceType + ":" + resource.patternType() + ":" + resource.name()
                    + " for request = " + request;
            if (allowed) {
                AUDIT.debug(line);
            } else {
                AUDIT.info(line);
            }
        }
        return allowed;
    }

    /** The ClusterMirror ACLs {@code filter} (on TOPIC, standing for ClusterMirror) matches; none without one. */
    public List<AclBinding> mirrorAcls(AclBindingFilter filter) {
        List<AclBinding> found = new ArrayList<>();
        mirrorAuthorizer.ifPresent(a -> a.acls(filter).forEach(found::add));
        return found;
    }

    /** Whether the principal may {@code operation} the cluster (Kafka's single resource named kafka-cluster). */
    public boolean allowedOnCluster(AuthorizableRequestContext context, AclOperation operation) {
        return allowed(context, operation, ResourceType.CLUSTER, Resource.CLUSTER_NAME);
    }

    /**
     * Kafka's rule for the config APIs ({@code DESCRIBE_CONFIGS} or {@code ALTER_CONFIGS}): a topic's configs by the
     * topic, a broker's and its loggers' by the cluster, a group's by the group. The error to answer with when the
     * principal may not; empty when it may (or the resource type is one Kafka does not authorize).
     */
    public Optional<Errors> configsDenied(AuthorizableRequestContext context, AclOperation operation,
                                          ConfigResource.Type type, String name) {
        return switch (type) {
            case TOPIC -> allowed(context, operation, ResourceType.TOPIC, name) ? Optional.empty()
                    : Optional.of(Errors.TOPIC_AUTHORIZATION_FAILED);
            case BROKER, BROKER_LOGGER -> allowedOnCluster(context, operation) ? Optional.empty()
                    : Optional.of(Errors.CLUSTER_AUTHORIZATION_FAILED);
            case GROUP -> allowed(context, operation, ResourceType.GROUP, name) ? Optional.empty()
                    : Optional.of(Errors.GROUP_AUTHORIZATION_FAILED);
            default -> Optional.empty();
        };
    }

    /**
     * Kafka's authorized-operations bit field for a resource, asked for by describe requests with
     * {@code includeAuthorizedOperations}: the operations Kafka supports on that resource type which the principal
     * may perform; all of them without an authorizer.
     */
    public int authorizedOperations(AuthorizableRequestContext context, ResourceType type, String name) {
        List<AclOperation> supported = List.copyOf(AclEntry.supportedOperations(type));
        Set<Byte> codes = new HashSet<>();
        if (authorizer.isEmpty()) {
            supported.forEach(op -> codes.add(op.code()));
        } else {
            ResourcePattern resource = new ResourcePattern(type, name, PatternType.LITERAL);
            // not logged: a describe asks about every operation, denials here are not failures
            List<Action> actions = supported.stream().map(op -> new Action(op, resource, 1, false, false)).toList();
            List<AuthorizationResult> results = authorizer.get().authorize(context, actions);
            for (int i = 0; i < supported.size(); i++) {
                if (results.get(i) == AuthorizationResult.ALLOWED) {
                    codes.add(supported.get(i).code());
                }
            }
        }
        return Utils.to32BitField(codes);
    }

    /**
     * Whether the principal may {@code operation} some resource of {@code type} (Kafka's authorizeByResourceType: an
     * idempotent producer needs WRITE on any topic); always without an authorizer.
     */
    public boolean allowedOnAny(AuthorizableRequestContext context, AclOperation operation, ResourceType type) {
        return authorizer.isEmpty()
                || authorizer.get().authorizeByResourceType(context, operation, type) == AuthorizationResult.ALLOWED;
    }

    @Override
    public void close() throws Exception {
        if (store.isPresent()) {
            store.get().close();
        }
        if (authorizer.isPresent()) {
            authorizer.get().close();
        }
        if (mirrorAuthorizer.isPresent()) {
            mirrorAuthorizer.get().close();
        }
    }
}

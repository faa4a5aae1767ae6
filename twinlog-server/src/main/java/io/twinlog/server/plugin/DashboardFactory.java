package io.twinlog.server.plugin;

import com.yammer.metrics.core.MetricsRegistry;
import io.twinlog.common.BrokerConfig;
import io.twinlog.common.HttpListener;
import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.utils.Time;

import java.io.IOException;
import java.util.Iterator;
import java.util.ServiceLoader;

/**
 * The broker's seam to the mirror dashboard, which lives in its own module ({@code twinlog-dashboard}) so the
 * broker's class path holds no HTTP views or actions unless the operator wants them (decision 112). The broker
 * looks the factory up with {@link ServiceLoader} only when {@code dashboard.listener} is set; the dashboard module
 * names its implementation in {@code META-INF/services/io.twinlog.server.plugin.DashboardFactory}.
 */
public interface DashboardFactory {
    /** Binds {@code listener} and starts serving; the broker closes what it returns when it shuts down. */
    Dashboard start(HttpListener listener, boolean actionsEnabled, DashboardBroker broker, MetricsRegistry registry,
                    Time time) throws IOException;

    /** A running dashboard. */
    interface Dashboard extends AutoCloseable {
        /** The page's URL, with the bound port. */
        String url();

        @Override
        void close();
    }

    /**
     * The dashboard module's factory on {@code classLoader}'s path; a one-line {@link ConfigException} (the start-up
     * refusal {@code Main} prints) when the module is not there.
     */
    static DashboardFactory load(ClassLoader classLoader) {
        Iterator<DashboardFactory> found = ServiceLoader.load(DashboardFactory.class, classLoader).iterator();
        if (!found.hasNext()) {
            throw new ConfigException(BrokerConfig.DASHBOARD_LISTENER + " is set but the mirror dashboard is not on "
                    + "the class path: add the twinlog-dashboard jar (libs/ of the release tarball holds it), or "
                    + "remove " + BrokerConfig.DASHBOARD_LISTENER);
        }
        return found.next();
    }
}

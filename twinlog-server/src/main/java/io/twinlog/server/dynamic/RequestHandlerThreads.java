package io.twinlog.server.dynamic;

import io.twinlog.common.BrokerConfig;
import io.twinlog.protocol.RequestHandlerPool;

/** {@code num.io.threads} live: the request handler pool grows or shrinks (a stopping thread finishes its request). */
public final class RequestHandlerThreads implements BrokerReconfigurable {
    private final RequestHandlerPool pool;

    public RequestHandlerThreads(RequestHandlerPool pool) {
        this.pool = pool;
    }

    @Override
    public String name() {
        return "request handler threads";
    }

    @Override
    public boolean reconfigures(String key) {
        return key.equals(BrokerConfig.NUM_IO_THREADS);
    }

    @Override
    public void validateReconfiguration(BrokerConfig current, BrokerConfig next) {
        ThreadCountRule.validate(BrokerConfig.NUM_IO_THREADS, pool.threadCount(), next.numIoThreads());
    }

    @Override
    public void reconfigure(BrokerConfig previous, BrokerConfig next) {
        pool.resize(next.numIoThreads());
    }
}

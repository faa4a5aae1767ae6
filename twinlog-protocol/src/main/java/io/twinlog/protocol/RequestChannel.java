package io.twinlog.protocol;

import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The bounded queue between network processors and request handler threads ({@code queued.max.requests}).
 * When it is full the processors block, which stops reading from sockets: back-pressure instead of memory growth.
 */
public final class RequestChannel {
    private final BlockingQueue<Request> queue;

    public RequestChannel(int capacity) {
        this.queue = new ArrayBlockingQueue<>(capacity);
    }

    void put(Request request) throws InterruptedException {
        queue.put(request);
    }

    Request poll(long timeoutMs) throws InterruptedException {
        return queue.poll(timeoutMs, TimeUnit.MILLISECONDS);
    }

    public int size() {
        return queue.size();
    }
}

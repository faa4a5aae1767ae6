package io.twinlog.campaign;

import java.util.List;

/**
 * Where the campaign's processes live on the network: every one on loopback ({@link LoopbackHosts}), or each in a
 * network namespace of its own with its own address, as separate hosts would be ({@link NetnsHosts}, {@code --netns}).
 * The campaign's proxies listen where every process can reach them; its clients connect to the processes directly.
 */
interface Hosts extends AutoCloseable {
    /** The address process {@code name} listens at (a broker "a0", a ZooKeeper node "zk1"). */
    String address(String name);

    /** Where the campaign's fault proxies listen. */
    String proxyAddress();

    /** The command that runs a program in process {@code name}'s place (empty: as it is). */
    List<String> launcher(String name);

    /** Removes what was set up (namespaces, links); processes are stopped first. */
    @Override
    void close();
}

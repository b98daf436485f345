package io.zse.api;

import io.micrometer.core.instrument.config.MeterFilter;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/** Filters Quarkus applies to every meter. */
@Singleton
public class MeterFilters {
    /**
     * Micrometer 1.16's Netty binder registers {@code netty.eventexecutor.workers} once per event-loop group under
     * the same name and no tags, so every start logged "This Gauge has been already registered" (quarkusio/quarkus
     * #52014). The gauge carries nothing useful (which group's worker count?): it is not registered at all.
     */
    @Produces
    @Singleton
    MeterFilter noUntaggedNettyWorkerCount() {
        return MeterFilter.denyNameStartsWith("netty.eventexecutor.workers");
    }
}

/** The simulator plumbing moved to src/simulator/sim-server.ts (shared by the generic OpenAPI simulator); kept here for existing imports. */
export * from '../simulator/sim-server.ts';

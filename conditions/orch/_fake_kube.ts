/**
 * What the orch unit tests share of a cluster's answers: the pods resource as discovery gives
 * it, and a Deployment's status once its rollout passed its progress deadline.
 *
 * @module
 */

import type { ApiResource } from "./discovery.ts";
import type { Verdict } from "./judge.ts";

/** The core group's pods, as discovery (aggregated or not) describes them. */
export const PODS: ApiResource = {
  group: "",
  version: "v1",
  plural: "pods",
  singular: "pod",
  kind: "Pod",
  namespaced: true,
  shortNames: ["po"],
  verbs: ["get", "list", "watch"],
};

/** A Deployment's status (generation 1) after its Progressing condition turned False. */
export const DEADLINE_EXCEEDED = {
  observedGeneration: 1,
  conditions: [{
    type: "Progressing",
    status: "False",
    reason: "ProgressDeadlineExceeded",
    message: 'ReplicaSet "web-1" has timed out progressing.',
  }],
};

/** The verdict on {@link DEADLINE_EXCEEDED}: final, as kubectl rollout status says. */
export const DEADLINE_VERDICT: Verdict = {
  state: "fail",
  text:
    'rollout exceeded its progress deadline: ProgressDeadlineExceeded: ReplicaSet "web-1" has timed out progressing.',
};

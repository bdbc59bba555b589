/**
 * The part of `@kubernetes/client-node` the orch kind calls: kubeconfig
 * loading and credentials. A dynamic `import()` of the package itself keeps
 * all of it (every API and model, 4 MB of the release bundle); naming what is
 * used lets the bundler leave the rest out (docs/development.md, "The
 * release bundle").
 *
 * @module
 */

export { KubeConfig } from "@kubernetes/client-node";

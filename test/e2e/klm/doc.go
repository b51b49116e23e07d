// Package klm stands in for Kyma's lifecycle-manager (KLM) in tests that
// cannot run it: its Manifest reconcile, which installs a module on a
// runtime, and its pinning of mandatory modules. It is written after KLM's
// source at tag 1.20.4 (commit c5b83f1), and copies none of it.
//
// A Manifest (manifests.klm.test.kim-snatch.kyma-project.io) in the
// control plane names a module and version; its layer is the raw manifest
// of the template ConfigMap TemplateName(module, version) (PublishTemplate).
// Start runs the controllers with one rest.Config for the control plane and
// one for the runtime. A test bumps Spec.Version, or a ModuleReleaseMeta's
// mandatory version, and reads the outcome in the Manifest's status.
package klm

// What each part mirrors, by lifecycle-manager path at 1.20.4:
//
//   - types.go, names.go: api/v1beta2/{manifest,modulereleasemeta}_types.go,
//     api/shared/{resource,state,operator_labels,operator_annotations}.go.
//   - klm.go: cmd/main.go (the Manifest and mandatory-module controllers'
//     wiring), internal/rate_limiter.go.
//   - controller.go: internal/controller/manifest/controller.go (one
//     reconcile: render, prune, apply, state check; the delete path) and
//     resource_list.go (the prune's identity).
//   - render.go, template.go, transform.go, images.go: internal/util.go
//     (parse), internal/service/manifest/render/{service,default_transforms,
//     normalise}.go, internal/imagerewrite/{rewrite,resource_rewriter}.go.
//   - prune.go: controller.go pruneDiff, pruneResource;
//     internal/manifest/skrresources/sync.go (status.synced, HasDiff).
//   - cleanup.go: internal/pkg/resources/cleanup.go (two phases).
//   - apply.go: internal/manifest/skrresources/ssa.go,
//     internal/common/fieldowners/const.go.
//   - statecheck.go: internal/manifest/statecheck/{state_check,
//     deployment_state_check,statefulset_state_check}.go.
//   - status.go: internal/manifest/status/{state,condition}.go,
//     pkg/queue/requeue_intervals.go, internal/pkg/flags/flags.go.
//   - setup.go: internal/controller/manifest/setup.go.
//   - mandatory.go: internal/controller/mandatorymodule/setup.go,
//     internal/service/mandatorymodule/installation/installation_service.go,
//     internal/watch/modulereleasemeta/mrm_handler.go,
//     api/v1beta2/moduletemplate_types.go (CreateModuleTemplateName).
//
// Left out: OCI layers and their parse cache (the template is read on
// every reconcile), module CRs, the unmanaged and orphan paths, metrics,
// the requeue jitter, and the SKR client cache.

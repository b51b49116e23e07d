// Package migration runs docs/migration.md, step by step and as written,
// from the old single-binary kim-snatch to KIM Snatch and back, on a local
// control plane while Pods are created at a steady rate, and counts what
// the webhooks did to every Pod (migration_test.go).
//
// The old kim-snatch runs as the stand-in of test/e2e/kimsnatch, Gardener
// cert-management as the stand-in of test/e2e/certmgmt, and the kubelet,
// which starts the Deployments' Pods and mounts the Secret into them, as
// the stand-in of test/e2e/kubelet. kubectl, kube-apiserver, kube-scheduler
// and kube-controller-manager are the real ones.
package migration

// Package kimsnatch stands in for the old single-binary kim-snatch, which
// KIM Snatch replaces (docs/migration.md), in tests that cannot run its
// image. It is built from the old kim-snatch's documented behaviour and
// manifests, not from its code, and does what that binary did:
//
//   - At start it lists the Nodes of the Kyma worker pool. With at least
//     one, it appends a preferred node affinity term (weight 10,
//     worker.gardener.cloud/pool In [pool]) to every Pod the API server
//     sends it on /mutate--v1-pod, unconditionally, also to a Pod that
//     already has one; Pods in kube-system are left alone. With none, it
//     annotates every Pod with worker.gardener.cloud/pool=<pool> instead.
//   - It serves HTTPS with the certificate in its certificate directory
//     (tls.crt, tls.key, ca.crt, mounted from the Secret
//     kim-snatch-certificates) and follows changes of tls.crt and tls.key.
//   - On every certificate load it reads ca.crt, gets the
//     MutatingWebhookConfiguration, sets every entry's caBundle to ca.crt
//     alone and, if any entry changed, applies the whole object it read
//     with server-side apply, field manager "snatch", Force. It does not
//     create the object: that is the installation's (Inventory). When this
//     fails the old binary exited and was restarted; the stand-in stops
//     serving and, after Options.RestartDelay, lists the Nodes and loads
//     the certificate again, as the restarted binary did. It serves only
//     once the first write after a start or restart has succeeded.
//
// Inventory returns the old installation's objects, as the manifest of a
// release up to 1.0.9 renders them, with the CustomResourceDefinitions of
// config/crd. The command cmd/kim-snatch runs the stand-in in a container,
// as the old image ran /manager; `make images` packs it.
package kimsnatch

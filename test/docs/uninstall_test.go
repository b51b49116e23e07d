package docs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/utils/ptr"

	"github.com/kyma-project/kim-snatch/pkg/syncer"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/objects"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
)

// The sections of docs/operations.md whose kubectl commands remove the
// installation, in the order "Remove both" runs them.
const (
	removeWebhook    = "Remove snatch-webhook"
	removeSyncer     = "Remove cabundle-syncer"
	removeComponents = "Remove both"
)

// partOf is the label every object of the installation carries.
const partOf = "app.kubernetes.io/part-of=kim-snatch"

// uninstallOverlay is deploy/default with every component that adds
// objects of its own, as an installation's overlay may hold them.
const uninstallOverlay = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../deploy/default
components:
  - ../deploy/components/prometheus
  - ../deploy/components/dashboards
  - ../deploy/components/fleet
`

// The uninstall of docs/operations.md, run as written against a real API
// server with garbage collection: applied with every component, the
// webhook's, the syncer's and the components' commands remove every object
// the installation holds or wrote, leave nothing labelled part-of
// kim-snatch, and never leave the MWC without the webhook's Service and
// Deployment. Each command that deletes by label names exactly the kinds
// its part of the installation renders. Removing the syncer alone leaves
// the webhook and the MWC's caBundle as they are.
func TestUninstallLeavesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts etcd, kube-apiserver and kube-controller-manager")
	}
	r := newUninstallRig(t)
	t.Run("each_command_names_the_kinds_its_part_renders", r.checkCommandsNameRenderedKinds)
	r.must(t, "apply", "--server-side", "-k", "uninstall")
	r.checkJob = writtenByTheInstallation(t, r.c, r.must)
	removed := t.Run("remove_both_leaves_nothing", r.removeBoth)
	t.Run("remove_the_syncer_alone_keeps_the_webhook", func(t *testing.T) {
		if !removed {
			t.Skip("installs again what remove_both_leaves_nothing removed")
		}
		r.removeSyncerAlone(t)
	})
}

// uninstallRig is a cluster with garbage collection, the documented
// removal commands and the installation's parts rendered in a workspace.
type uninstallRig struct {
	w        *workspace
	c        *framework.Cluster
	steps    map[string][][]string // section -> its kubectl commands
	rendered map[string][]byte     // webhook, syncer, default, all -> YAML
	dyn      dynamic.Interface
	disc     discovery.DiscoveryInterface
	mapper   *restmapper.DeferredDiscoveryRESTMapper
	checkJob string // the check Job writtenByTheInstallation created last
}

func newUninstallRig(t *testing.T) *uninstallRig {
	t.Helper()
	ops := readDoc(t, "docs/operations.md")
	r := &uninstallRig{w: newWorkspace(t), steps: map[string][][]string{}}
	for _, s := range []string{removeWebhook, removeSyncer, removeComponents} {
		r.steps[s] = sectionKubectl(t, ops.section(t, s))
	}
	r.rendered = renderUninstallParts(t, r.w)
	r.c = framework.New(t, framework.Options{ControllerManager: true})
	r.must(t, "apply", "--server-side", "-f", filepath.Join(r.w.root, "test", "manifests", "testdata", "crds"))
	r.must(t, "wait", "--for=condition=Established", "crd", "--all", "--timeout=60s")
	r.must(t, "create", "namespace", "kyma-system")
	quiet := rest.CopyConfig(r.c.Config)
	quiet.WarningHandler = rest.NoWarnings{} // deprecated kinds in the listing of every resource
	r.dyn = dynamic.NewForConfigOrDie(quiet)
	r.disc = discovery.NewDiscoveryClientForConfigOrDie(quiet)
	r.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(r.disc))
	return r
}

// renderUninstallParts writes uninstallOverlay into w and renders the
// webhook's, the syncer's, the default and the whole installation into
// <name>.yaml of w, and returns them by name.
func renderUninstallParts(t *testing.T, w *workspace) map[string][]byte {
	t.Helper()
	overlay := filepath.Join(w.dir, "uninstall")
	if err := os.MkdirAll(overlay, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(uninstallOverlay), 0o644); err != nil {
		t.Fatal(err)
	}
	rendered := map[string][]byte{}
	for name, rel := range map[string]string{"webhook": "deploy/webhook", "syncer": "deploy/syncer", "default": "deploy/default", "all": "uninstall"} {
		out, err := w.render("-k", rel)
		if err != nil {
			t.Fatal(err)
		}
		rendered[name] = out
		if err := os.WriteFile(filepath.Join(w.dir, name+".yaml"), out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return rendered
}

func (r *uninstallRig) kubectl(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	return framework.RunKubectl(ctx, framework.KubectlOptions{Kubeconfig: r.c.KubeconfigPath, Dir: r.w.dir}, args...)
}

func (r *uninstallRig) must(t *testing.T, args ...string) string {
	t.Helper()
	out, err := r.kubectl(args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// neverAlone fails t where the MWC exists without the Service and the
// Deployment it calls: the API server calls the webhook while the MWC
// exists, so they must outlive it.
func (r *uninstallRig) neverAlone(t *testing.T, after string) {
	t.Helper()
	if _, err := r.kubectl("get", "mutatingwebhookconfiguration", "kim-snatch-mutating-webhook-configuration"); err != nil {
		return
	}
	for _, obj := range []string{"service/snatch-webhook", "deployment/snatch-webhook"} {
		if _, err := r.kubectl("-n", "kyma-system", "get", obj); err != nil {
			t.Fatalf("after `%s` the MWC exists without %s", after, obj)
		}
	}
}

// run runs the commands of section, checking neverAlone after each.
func (r *uninstallRig) run(t *testing.T, section string) {
	t.Helper()
	for _, args := range r.steps[section] {
		line := "kubectl " + strings.Join(args, " ")
		if out, err := r.kubectl(args...); err != nil {
			t.Fatalf("%s: `%s`: %v\n%s", section, line, err, out)
		}
		r.neverAlone(t, line)
	}
}

// checkCommandsNameRenderedKinds checks that each section's one command
// that deletes by label names exactly the kinds its part renders.
func (r *uninstallRig) checkCommandsNameRenderedKinds(t *testing.T) {
	webhook := kindsOf(t, r.rendered["webhook"], func(u *unstructured.Unstructured) bool {
		return u.GetKind() != "MutatingWebhookConfiguration" // removed first, by name
	})
	syncer := kindsOf(t, r.rendered["syncer"], func(u *unstructured.Unstructured) bool {
		// The check's namespace goes by name, and its objects with it.
		return u.GetKind() != "Namespace" && u.GetNamespace() != "kim-snatch-check"
	})
	inDefault := map[string]bool{}
	for _, id := range objectIDs(t, r.rendered["default"]) {
		inDefault[id] = true
	}
	// What the components add, but for what the syncer's labels select.
	components := kindsOf(t, r.rendered["all"], func(u *unstructured.Unstructured) bool {
		return !inDefault[objectID(u)] && u.GetLabels()["app.kubernetes.io/name"] != "cabundle-syncer"
	})
	for section, want := range map[string]map[string]bool{removeWebhook: webhook, removeSyncer: syncer, removeComponents: components} {
		byLabel := 0
		for _, args := range r.steps[section] {
			if !slices.ContainsFunc(args, func(a string) bool { return a == "-l" || strings.HasPrefix(a, "--selector") }) {
				continue
			}
			byLabel++
			compareSets(t, section+": kind", deletedKinds(t, r.mapper, args), want)
		}
		if byLabel != 1 {
			t.Errorf("%s: %d commands delete by label, want 1", section, byLabel)
		}
	}
}

// removeBoth runs the three sections in order and checks that nothing of
// the installation, nor anything it wrote, is left.
func (r *uninstallRig) removeBoth(t *testing.T) {
	// Dependents too: the Deployments' ReplicaSets and Pods, and the
	// check Job's Pod, all labelled through the Pod templates.
	poll.Eventually(t, "a ReplicaSet and a Pod of the installation", func(context.Context) error {
		if objs := labelled(t, r.dyn, r.disc); !dependentsExist(objs) {
			return fmt.Errorf("the installation's objects: %v", objs)
		}
		return nil
	}, poll.Timeout(time.Minute), listEverything)
	r.run(t, removeWebhook)
	if out := r.must(t, "get", "-f", "syncer.yaml", "-o", "name"); strings.Count(out, "\n") != len(objectIDs(t, r.rendered["syncer"])) {
		t.Fatalf("removing snatch-webhook removed objects of cabundle-syncer; left:\n%s", out)
	}
	r.run(t, removeSyncer)
	r.run(t, removeComponents)
	left := waitForNothingLeft(t, r.dyn, r.disc)
	if len(left) > 0 {
		t.Fatalf("left after the uninstall: %v", left)
	}
	if out := r.must(t, "get", "-f", "all.yaml", "--ignore-not-found", "-o", "name"); strings.TrimSpace(out) != "" {
		t.Fatalf("objects of the installation left after the uninstall:\n%s", out)
	}
	for _, obj := range [][]string{
		{"-n", "kyma-system", "get", "secret/kim-snatch-certificates", "lease/cabundle-syncer", "job/" + r.checkJob, "--ignore-not-found", "-o", "name"},
		{"get", "namespace/kim-snatch-check", "--ignore-not-found", "-o", "name"},
	} {
		if out := r.must(t, obj...); strings.TrimSpace(out) != "" {
			t.Fatalf("written by the installation and left after the uninstall:\n%s", out)
		}
	}
}

// removeSyncerAlone installs again and checks that removing the syncer
// leaves the webhook, its Secret and the MWC's caBundle as they are.
func (r *uninstallRig) removeSyncerAlone(t *testing.T) {
	r.must(t, "apply", "--server-side", "-k", "uninstall")
	r.checkJob = writtenByTheInstallation(t, r.c, r.must)
	const bundle = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==" // stands in for the syncer's write
	r.must(t, "patch", "mutatingwebhookconfiguration", "kim-snatch-mutating-webhook-configuration", "--type=json",
		"-p", `[{"op":"add","path":"/webhooks/0/clientConfig/caBundle","value":"`+bundle+`"}]`)
	r.run(t, removeSyncer)
	if out := r.must(t, "get", "-f", "webhook.yaml", "-o", "name"); strings.Count(out, "\n") != len(objectIDs(t, r.rendered["webhook"])) {
		t.Fatalf("removing cabundle-syncer removed objects of snatch-webhook; left:\n%s", out)
	}
	got := r.must(t, "get", "mutatingwebhookconfiguration", "kim-snatch-mutating-webhook-configuration", "-o", "jsonpath={.webhooks[0].clientConfig.caBundle}")
	if got != bundle {
		t.Fatalf("the caBundle after removing the syncer is %q, want %q as it was", got, bundle)
	}
	if out := r.must(t, "-n", "kyma-system", "get", "secret/kim-snatch-certificates", "-o", "name"); strings.TrimSpace(out) == "" {
		t.Fatal("removing cabundle-syncer removed the webhook's Secret")
	}
}

// writtenByTheInstallation creates what a running installation writes
// beside its manifests: the Secret that cert-management issues, the
// syncer's Lease, and a check Job created from the CronJob, under a name
// of its own as docs/operations.md ("Run the check in the cluster")
// creates it; it returns the Job's name.
func writtenByTheInstallation(t *testing.T, c *framework.Cluster, must func(t *testing.T, args ...string) string) string {
	t.Helper()
	must(t, "-n", "kyma-system", "create", "secret", "generic", "kim-snatch-certificates",
		"--from-literal=ca.crt=stand-in", "--from-literal=tls.crt=stand-in", "--from-literal=tls.key=stand-in")
	// The install ships the Lease (deploy/syncer/lease.yaml); a leader
	// writes itself in, as leader election does.
	leases := c.Clientset.CoordinationV1().Leases("kyma-system")
	lease, err := leases.Get(context.Background(), syncer.DefaultLeaseName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lease.Spec.HolderIdentity = ptr.To("cabundle-syncer-0")
	if _, err := leases.Update(context.Background(), lease, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	job := checkJobName(time.Now())
	must(t, "-n", "kyma-system", "create", "job", "--from=cronjob/kim-snatch-check", job)
	return job
}

// checkJobName is the name docs/operations.md gives a check Job it runs on
// demand: the CronJob's name and the time in UTC to the second, as
// `date -u +%Y%m%d%H%M%S` writes it.
func checkJobName(now time.Time) string {
	return "kim-snatch-check-" + now.UTC().Format("20060102150405")
}

// sectionKubectl returns the kubectl commands of text's code blocks, in
// order, as arguments after "kubectl".
func sectionKubectl(t *testing.T, text string) [][]string {
	t.Helper()
	var out [][]string
	for _, l := range codeBlocks(text) {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "kubectl ") {
			continue
		}
		words, err := shellWords(l)
		if err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		out = append(out, words[1:])
	}
	if len(out) == 0 {
		t.Fatal("a section of the uninstall has no kubectl command")
	}
	return out
}

// deletedKinds returns the group kinds of the resource list of a
// `kubectl delete` command.
func deletedKinds(t *testing.T, mapper *restmapper.DeferredDiscoveryRESTMapper, args []string) map[string]bool {
	t.Helper()
	i := slices.Index(args, "delete")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("kubectl %s deletes nothing", strings.Join(args, " "))
	}
	kinds := map[string]bool{}
	for _, r := range strings.Split(args[i+1], ",") {
		gr := schema.ParseGroupResource(r)
		gvk, err := mapper.KindFor(gr.WithVersion(""))
		if err != nil {
			t.Fatalf("kubectl delete %s: %v", r, err)
		}
		kinds[gvk.GroupKind().String()] = true
	}
	return kinds
}

// decodeAll returns the objects of a YAML stream.
func decodeAll(t *testing.T, stream []byte) []*unstructured.Unstructured {
	t.Helper()
	objs, err := objects.Decode(stream)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// kindsOf returns the group kinds of the objects of stream that keep
// accepts.
func kindsOf(t *testing.T, stream []byte, keep func(*unstructured.Unstructured) bool) map[string]bool {
	t.Helper()
	kinds := map[string]bool{}
	for _, u := range decodeAll(t, stream) {
		if keep(u) {
			kinds[u.GroupVersionKind().GroupKind().String()] = true
		}
	}
	return kinds
}

func objectID(u *unstructured.Unstructured) string {
	return fmt.Sprintf("%s %s/%s", u.GroupVersionKind().GroupKind(), u.GetNamespace(), u.GetName())
}

func objectIDs(t *testing.T, stream []byte) []string {
	t.Helper()
	var out []string
	for _, u := range decodeAll(t, stream) {
		out = append(out, objectID(u))
	}
	return out
}

// listEverything paces the waits whose every attempt lists every listable
// resource.
var listEverything = poll.Interval(time.Second)

// waitForNothingLeft waits until no object of any listable resource
// carries the label partOf, as garbage collection and the namespace
// controller finish, and returns what is left when the wait ends.
func waitForNothingLeft(t *testing.T, dyn dynamic.Interface, disc discovery.DiscoveryInterface) []string {
	t.Helper()
	var left []string
	_ = poll.Until(t.Context(), "nothing of the installation left", func(context.Context) error {
		if left = labelled(t, dyn, disc); len(left) > 0 {
			return fmt.Errorf("left: %v", left)
		}
		return nil
	}, poll.Timeout(2*time.Minute), listEverything)
	return left
}

// dependentsExist reports whether objects lists a ReplicaSet and a Pod.
func dependentsExist(objects []string) bool {
	return slices.ContainsFunc(objects, func(o string) bool { return strings.HasPrefix(o, "ReplicaSet.apps ") }) &&
		slices.ContainsFunc(objects, func(o string) bool { return strings.HasPrefix(o, "Pod ") })
}

func labelled(t *testing.T, dyn dynamic.Interface, disc discovery.DiscoveryInterface) []string {
	t.Helper()
	lists, err := disc.ServerPreferredResources()
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list.APIResources {
			if !slices.Contains(r.Verbs, "list") {
				continue
			}
			items, err := dyn.Resource(gv.WithResource(r.Name)).List(context.Background(), metav1.ListOptions{LabelSelector: partOf})
			if apierrors.IsNotFound(err) || apierrors.IsMethodNotSupported(err) {
				continue
			}
			if err != nil {
				t.Fatalf("list %s: %v", r.Name, err)
			}
			for _, u := range items.Items {
				left = append(left, objectID(&u))
			}
		}
	}
	return left
}

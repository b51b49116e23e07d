package migration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/kyma-project/kim-snatch/test/e2e/klm"
	"github.com/kyma-project/kim-snatch/test/e2e/stack"
	"github.com/kyma-project/kim-snatch/test/framework"
	"github.com/kyma-project/kim-snatch/test/framework/poll"
	"github.com/kyma-project/kim-snatch/test/process"
)

// The stand-in's control plane is the runtime's own API server, in a
// namespace of its own, as KLM's is kcp-system; the Manifest is the one
// runtime's Manifest of the module.
const (
	kcpNamespace = "kcp-system"
	moduleName   = "kim-snatch"
	manifestName = "runtime-1-kim-snatch"
	// rolloutMaxDelay bounds the random delay with which a new mandatory
	// version reaches the Manifest, as in lifecycle-manager.
	rolloutMaxDelay = 30 * time.Second
	// stepTimeout bounds each wait for the Manifest or the certificate.
	stepTimeout = 10 * time.Minute
)

// pairs are the binary releases each module version holds: the module,
// then the webhook's release alone changed, then the syncer's too.
var pairs = map[string][2]string{
	module:        {"v0.1.0", "v0.1.0"},
	webhookUpdate: {"v0.1.1", "v0.1.0"},
	syncerUpdate:  {"v0.1.1", "v0.1.1"},
}

// fleet is lifecycle-manager's stand-in on the runtime of e, with the
// module's ModuleReleaseMeta and the runtime's Manifest.
type fleet struct {
	e   *env
	klm *klm.KLM
	cl  client.Client
	mrm *klm.ModuleReleaseMeta
	key types.NamespacedName
	// ready is, by phase, how long after the version was pinned the
	// Manifest was Ready at it.
	ready map[string]time.Duration
	// alerts follows the alerts, once monitoring.yaml is applied.
	alerts *fleetAlerts
}

// startFleet renders every module version of the path in e's workspace,
// publishes each as the template lifecycle-manager reads, and starts the
// stand-in.
func (e *env) startFleet(ctx context.Context, t *testing.T) *fleet {
	t.Helper()
	if err := stack.CreateNamespace(ctx, e.client, kcpNamespace, false); err != nil {
		t.Fatal(err)
	}
	manifests, err := e.renderModules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for version, raw := range manifests {
		if err := klm.PublishTemplate(ctx, e.client, kcpNamespace, moduleName, version, raw); err != nil {
			t.Fatal(err)
		}
	}
	if err := klm.InstallCRDs(ctx, e.cluster.Config); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := klm.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cl, err := client.New(e.cluster.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(e.workspace, "lifecycle-manager.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = logFile.Close() })
	// The stand-in's log, and controller-runtime's, which would otherwise
	// warn that it has none, go to the workspace; a failed wait logs it.
	logger := zapr.NewLogger(zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()),
		zapcore.Lock(logFile), zapcore.InfoLevel)))
	ctrllog.SetLogger(logger)
	k, err := klm.Start(context.WithoutCancel(ctx), klm.Options{
		ControlPlane: e.cluster.Config, Runtime: e.cluster.Config, Namespace: kcpNamespace,
		Intervals: fleetIntervals(), RolloutMaxDelay: rolloutMaxDelay, Log: logger,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := k.Stop(); err != nil {
			t.Errorf("stop lifecycle-manager's stand-in: %v", err)
		}
	})
	return &fleet{e: e, klm: k, cl: cl, key: types.NamespacedName{Namespace: kcpNamespace, Name: manifestName},
		ready: map[string]time.Duration{}}
}

// renderModules renders, in the workspace, the manifest of every module
// version by version: kim-snatch's release as lifecycle-manager delivers
// it (its manifest without the CustomResourceDefinitions that releases
// after 1.0.9 no longer carry), and KIM Snatch's module and bridge
// versions as `hack/release/release.sh --module-manifests` renders them from the
// binary releases, which `--manifests` renders from bases that run the
// local images.
func (e *env) renderModules(ctx context.Context) (map[string][]byte, error) {
	old, err := os.ReadFile(e.oldManifest)
	if err != nil {
		return nil, err
	}
	if old, err = without(old, "CustomResourceDefinition"); err != nil {
		return nil, err
	}
	oldPath := filepath.Join(e.workspace, "kim-snatch-"+oldModule+".yaml")
	if err := writeFile(oldPath, old); err != nil {
		return nil, err
	}
	out := map[string][]byte{oldModule: old}
	for _, b := range []struct{ binary, version string }{{"snatch-webhook", "v0.1.1"}, {"cabundle-syncer", "v0.1.1"}} {
		dir := filepath.Join("dist", b.binary, b.version)
		if err := e.release(ctx, "--manifests", dir, b.binary, b.version); err != nil {
			return nil, err
		}
	}
	for version, pair := range pairs {
		dir := filepath.Join(e.workspace, "modules", version)
		args := []string{"--module-manifests", dir, version, pair[0], pair[1]}
		if version == module {
			args = append(args, oldPath)
		}
		if err := e.release(ctx, args...); err != nil {
			return nil, err
		}
		files := map[string]string{version: "module.yaml"}
		if version == module {
			for i, b := range bridges {
				files[b] = fmt.Sprintf("bridge-%d.yaml", i+1)
			}
		}
		for v, file := range files {
			if out[v], err = os.ReadFile(filepath.Join(dir, file)); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// release runs the workspace's hack/release/release.sh with args.
func (e *env) release(ctx context.Context, args ...string) error {
	kubectlBin, err := framework.Kubectl()
	if err != nil {
		return err
	}
	release := process.Command{Dir: e.workspace, Env: []string{"KUBECTL=" + kubectlBin}}
	_, err = release.Run(ctx, filepath.Join(e.workspace, "hack", "release", "release.sh"), args...)
	return err
}

// install pins the module at version and creates the runtime's Manifest
// of it, as lifecycle-manager does for a new runtime, and waits until it
// is Ready.
func (f *fleet) install(ctx context.Context, t *testing.T, version string) {
	t.Helper()
	f.e.progress("installing the module %s through lifecycle-manager's stand-in", version)
	f.mrm = &klm.ModuleReleaseMeta{
		ObjectMeta: metav1.ObjectMeta{Namespace: kcpNamespace, Name: moduleName},
		Spec:       klm.ModuleReleaseMetaSpec{Mandatory: &klm.Mandatory{Version: version}},
	}
	if err := f.cl.Create(ctx, f.mrm); err != nil {
		t.Fatal(err)
	}
	m := &klm.Manifest{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.key.Namespace, Name: f.key.Name, Labels: map[string]string{
			klm.ModuleNameLabel: moduleName, klm.MandatoryModuleLabel: "true",
		}},
		Spec: klm.ManifestSpec{Module: moduleName, Version: version},
	}
	if err := f.cl.Create(ctx, m); err != nil {
		t.Fatal(err)
	}
	if _, err := f.waitReady(ctx, version); err != nil {
		t.Fatal(err)
	}
}

// pin sets the mandatory version of the module, as the fleet's operator
// does in the ModuleReleaseMeta.
func (f *fleet) pin(ctx context.Context, version string) error {
	p := client.MergeFrom(f.mrm.DeepCopy())
	f.mrm.Spec.Mandatory.Version = version
	return f.cl.Patch(ctx, f.mrm, p)
}

// waitReady waits until the Manifest is Ready at version, and returns it.
// It looks twice a second: step records how long the Manifest took.
func (f *fleet) waitReady(ctx context.Context, version string) (*klm.Manifest, error) {
	var last klm.Manifest
	err := poll.Until(ctx, "the Manifest Ready at "+version, func(ctx context.Context) error {
		if err := f.cl.Get(ctx, f.key, &last); err != nil {
			return poll.Stop(err)
		}
		if !last.ReadyAt(version) {
			return fmt.Errorf("spec %+v, status %+v", last.Spec, last.Status)
		}
		return nil
	}, poll.Timeout(stepTimeout), poll.Interval(500*time.Millisecond))
	if err != nil {
		return nil, err
	}
	return &last, nil
}

// step pins version, in the phase "<scenario>: <version>" of l, and waits
// for what docs/migration.md has the operator wait for before the next
// step; it records how long the Manifest took to be Ready.
func (f *fleet) step(ctx context.Context, t *testing.T, l *load, scenario, version string) {
	t.Helper()
	phase := scenario + ": " + version
	f.e.phase(ctx, t, l, phase, func() error {
		f.e.progress("%s", phase)
		start := time.Now()
		if err := f.pin(ctx, version); err != nil {
			return err
		}
		if _, err := f.waitReady(ctx, version); err != nil {
			f.diagnose(ctx, t)
			return err
		}
		f.ready[phase] = time.Since(start)
		if err := f.e.waitSettled(ctx); err != nil {
			f.diagnose(ctx, t)
			return err
		}
		return f.e.hold(ctx, 10*time.Second)
	})
	f.alerts.observe(ctx, scenario)
}

// diagnose logs what a failed step leaves: kyma-system's workloads and the
// last lines of the stand-in's log.
func (f *fleet) diagnose(ctx context.Context, t *testing.T) {
	f.e.diagnose(ctx, t)
	data, err := os.ReadFile(filepath.Join(f.e.workspace, "lifecycle-manager.log"))
	if err != nil {
		t.Logf("lifecycle-manager's stand-in log: %v", err)
		return
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	t.Logf("lifecycle-manager's stand-in, last lines:\n%s", strings.Join(lines[max(0, len(lines)-30):], "\n"))
}

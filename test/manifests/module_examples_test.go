package manifests

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kyma-project/kim-snatch/test/tools"
)

// The examples of deploy/module/examples against lifecycle-manager's API,
// operator.kyma-project.io/v1beta2 as lifecycle-manager 1.20.4 defines it
// (api/v1beta2/moduletemplate_types.go, modulereleasemeta_types.go): the
// types below hold only the fields of its types, and the patterns are those
// of their validation markers.
const moduleExamples = "deploy/module/examples"

var (
	klmModuleName      = regexp.MustCompile(`^([a-z]{3,}(-[a-z]{3,})*)?$`)
	klmTemplateVersion = regexp.MustCompile(`^((0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[a-zA-Z-][0-9a-zA-Z-]*)?)?$`)
	klmOCMName         = regexp.MustCompile(`^[a-z][-a-z0-9]*([.][a-z][-a-z0-9]*)*[.][a-z]{2,}` +
		`(/[a-z][-a-z0-9_]*([.][a-z][-a-z0-9_]*)*)+$`)
)

type klmMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type moduleTemplate struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Metadata   klmMeta `json:"metadata"`
	Spec       struct {
		Channel          string          `json:"channel,omitempty"`
		Version          string          `json:"version"`
		ModuleName       string          `json:"moduleName"`
		Mandatory        bool            `json:"mandatory"`
		Data             map[string]any  `json:"data,omitempty"`
		Descriptor       json.RawMessage `json:"descriptor"`
		CustomStateCheck []any           `json:"customStateCheck,omitempty"`
		Resources        []struct {
			Name string `json:"name"`
			Link string `json:"link"`
		} `json:"resources,omitempty"`
		Info *struct {
			Repository    string `json:"repository"`
			Documentation string `json:"documentation"`
			Icons         []struct {
				Name string `json:"name"`
				Link string `json:"link"`
			} `json:"icons,omitempty"`
		} `json:"info,omitempty"`
		AssociatedResources []metav1.GroupVersionKind `json:"associatedResources,omitempty"`
		Manager             *struct {
			Group     string `json:"group"`
			Version   string `json:"version"`
			Kind      string `json:"kind"`
			Namespace string `json:"namespace,omitempty"`
			Name      string `json:"name"`
		} `json:"manager,omitempty"`
		RequiresDowntime bool `json:"requiresDowntime"`
	} `json:"spec"`
}

type moduleReleaseMeta struct {
	APIVersion string  `json:"apiVersion"`
	Kind       string  `json:"kind"`
	Metadata   klmMeta `json:"metadata"`
	Spec       struct {
		ModuleName       string `json:"moduleName"`
		OcmComponentName string `json:"ocmComponentName,omitempty"`
		Channels         []struct {
			Channel string `json:"channel"`
			Version string `json:"version"`
		} `json:"channels,omitempty"`
		Mandatory *struct {
			Version string `json:"version"`
		} `json:"mandatory,omitempty"`
		Beta     bool `json:"beta,omitempty"`
		Internal bool `json:"internal,omitempty"`
	} `json:"spec"`
}

// ocmDescriptor is what the examples' component descriptor must name.
type ocmDescriptor struct {
	Component struct {
		Name      string `json:"name"`
		Version   string `json:"version"`
		Resources []struct {
			Name    string         `json:"name"`
			Version string         `json:"version"`
			Access  map[string]any `json:"access"`
		} `json:"resources"`
	} `json:"component"`
}

// readExample decodes the example file into into, rejecting a field the
// API does not have.
func readExample(t *testing.T, file string, into any) {
	t.Helper()
	data := readFile(t, filepath.Join(tools.MustRepoRoot(t), moduleExamples, file))
	if err := yaml.UnmarshalStrict([]byte(data), into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// The examples make kim-snatch a mandatory module as lifecycle-manager
// finds one: the ModuleReleaseMeta named after the module names a version,
// the ModuleTemplate of that name and version is mandatory, its manager is
// the webhook's Deployment, which module.yaml puts first, and it points at
// the module.yaml of that module release.
func TestModuleExamplesMakeKimSnatchAMandatoryModule(t *testing.T) {
	var mt moduleTemplate
	var mrm moduleReleaseMeta
	readExample(t, "moduletemplate.yaml", &mt)
	readExample(t, "modulereleasemeta.yaml", &mrm)
	var desc ocmDescriptor
	if err := json.Unmarshal(mt.Spec.Descriptor, &desc); err != nil {
		t.Fatalf("descriptor: %v", err)
	}
	t.Run("template_is_named_module_dash_version", func(t *testing.T) { checkTemplateName(t, &mt) })
	t.Run("template_is_mandatory", func(t *testing.T) { checkTemplateMandatory(t, &mt) })
	t.Run("release_meta_names_the_template_as_mandatory", func(t *testing.T) { checkReleaseMeta(t, &mrm, &mt, &desc) })
	t.Run("manager_is_the_webhook_deployment", func(t *testing.T) { checkTemplateManager(t, &mt) })
	t.Run("raw_manifest_is_the_module_release", func(t *testing.T) { checkRawManifestLink(t, &mt) })
	t.Run("descriptor_names_both_binaries", func(t *testing.T) { checkDescriptorBinaries(t, &desc) })
}

func checkTemplateName(t *testing.T, mt *moduleTemplate) {
	s := mt.Spec
	if mt.APIVersion != "operator.kyma-project.io/v1beta2" || mt.Kind != "ModuleTemplate" {
		t.Errorf("%s %s, want operator.kyma-project.io/v1beta2 ModuleTemplate", mt.APIVersion, mt.Kind)
	}
	if s.ModuleName != moduleName || !klmModuleName.MatchString(s.ModuleName) || len(s.ModuleName) > 64 {
		t.Errorf("moduleName %q, want %s, which lifecycle-manager's pattern takes", s.ModuleName, moduleName)
	}
	if s.Version == "" || !klmTemplateVersion.MatchString(s.Version) || len(s.Version) > 32 {
		t.Errorf("version %q is not a module version lifecycle-manager takes", s.Version)
	}
	if want := s.ModuleName + "-" + s.Version; mt.Metadata.Name != want {
		t.Errorf("name %q, want %q: lifecycle-manager looks a mandatory module's template up by it", mt.Metadata.Name, want)
	}
}

func checkTemplateMandatory(t *testing.T, mt *moduleTemplate) {
	l := mt.Metadata.Labels
	if mandatory := l["operator.kyma-project.io/mandatory-module"]; !mt.Spec.Mandatory || mandatory != "true" {
		t.Errorf("mandatory %v, label mandatory-module %q; want both set", mt.Spec.Mandatory, mandatory)
	}
	if l["operator.kyma-project.io/module-name"] != moduleName || mt.Spec.Channel != "" || mt.Spec.Data != nil {
		t.Errorf("module-name label %q, channel %q, data %v; want %s, no channel and no custom resource",
			l["operator.kyma-project.io/module-name"], mt.Spec.Channel, mt.Spec.Data, moduleName)
	}
}

func checkReleaseMeta(t *testing.T, mrm *moduleReleaseMeta, mt *moduleTemplate, desc *ocmDescriptor) {
	s := mrm.Spec
	if mrm.APIVersion != "operator.kyma-project.io/v1beta2" || mrm.Kind != "ModuleReleaseMeta" {
		t.Errorf("%s %s, want operator.kyma-project.io/v1beta2 ModuleReleaseMeta", mrm.APIVersion, mrm.Kind)
	}
	if mrm.Metadata.Name != moduleName || s.ModuleName != moduleName || mrm.Metadata.Namespace != mt.Metadata.Namespace {
		t.Errorf("%s/%s for module %q; want it named after the module, beside its template in %s",
			mrm.Metadata.Namespace, mrm.Metadata.Name, s.ModuleName, mt.Metadata.Namespace)
	}
	if s.Mandatory == nil || len(s.Channels) != 0 || s.Mandatory.Version != mt.Spec.Version {
		t.Fatalf("mandatory %v, channels %v; want mandatory.version %s alone", s.Mandatory, s.Channels, mt.Spec.Version)
	}
	if !klmOCMName.MatchString(s.OcmComponentName) || s.OcmComponentName != desc.Component.Name {
		t.Errorf("ocmComponentName %q, want the descriptor's component %q, which lifecycle-manager's pattern takes",
			s.OcmComponentName, desc.Component.Name)
	}
	if desc.Component.Version != mt.Spec.Version {
		t.Errorf("the descriptor is of version %s, the template of %s", desc.Component.Version, mt.Spec.Version)
	}
}

func checkTemplateManager(t *testing.T, mt *moduleTemplate) {
	m := mt.Spec.Manager
	if m == nil || m.Group != "apps" || m.Version != "v1" || m.Kind != "Deployment" {
		t.Fatalf("manager %+v, want the Deployment snatch-webhook", m)
	}
	d := find(t, render(t, webhookBase), "Deployment", m.Name)
	if m.Name != "snatch-webhook" || d.GetNamespace() != m.Namespace {
		t.Errorf("manager %s/%s, want the webhook's Deployment %s/snatch-webhook", m.Namespace, m.Name, d.GetNamespace())
	}
}

func checkRawManifestLink(t *testing.T, mt *moduleTemplate) {
	tag := moduleName + "/" + mt.Spec.Version
	want := "https://github.com/kyma-project/kim-snatch/releases/download/" + tag + "/module.yaml"
	for _, r := range mt.Spec.Resources {
		if r.Name == "rawManifest" && r.Link == want {
			return
		}
	}
	t.Errorf("resources %v, want rawManifest %s, the module.yaml of the release %s", mt.Spec.Resources, want, tag)
}

func checkDescriptorBinaries(t *testing.T, desc *ocmDescriptor) {
	images := map[string]string{}
	for _, r := range desc.Component.Resources {
		if ref, ok := r.Access["imageReference"].(string); ok {
			images[r.Name] = ref
			if !strings.Contains(ref, "/"+r.Name+":"+r.Version+"@sha256:") {
				t.Errorf("resource %s of version %s names the image %s", r.Name, r.Version, ref)
			}
		}
	}
	for _, b := range moduleBinaries {
		if images[b] == "" {
			t.Errorf("the descriptor names no image of %s: %v", b, images)
		}
	}
}

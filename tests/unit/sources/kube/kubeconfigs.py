"""kubeconfigs as the providers write them (EKS, GKE, kind) for the kubeconfig loader's tests."""

from __future__ import annotations

import base64
from pathlib import Path

import trustme

__all__ = ["CA", "CA_DATA", "CA_PEM", "EKS", "GKE", "KIND", "write"]

CA = trustme.CA()
CA_PEM = CA.cert_pem.bytes()
CA_DATA = base64.b64encode(CA_PEM).decode()

# As `aws eks update-kubeconfig --name prod --region eu-west-1 --profile finance` writes it.
EKS = f"""\
apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {CA_DATA}
    server: https://0123456789ABCDEF0123456789ABCDEF.gr7.eu-west-1.eks.amazonaws.com
  name: arn:aws:eks:eu-west-1:111122223333:cluster/prod
contexts:
- context:
    cluster: arn:aws:eks:eu-west-1:111122223333:cluster/prod
    user: arn:aws:eks:eu-west-1:111122223333:cluster/prod
  name: arn:aws:eks:eu-west-1:111122223333:cluster/prod
current-context: arn:aws:eks:eu-west-1:111122223333:cluster/prod
kind: Config
preferences: {{}}
users:
- name: arn:aws:eks:eu-west-1:111122223333:cluster/prod
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      args:
      - --region
      - eu-west-1
      - eks
      - get-token
      - --cluster-name
      - prod
      - --output
      - json
      command: aws
      env:
      - name: AWS_PROFILE
        value: finance
"""

# As `gcloud container clusters get-credentials` writes it (with the plugin installed).
GKE = f"""\
apiVersion: v1
kind: Config
current-context: gke_acme-ml_europe-west4_training
clusters:
- name: gke_acme-ml_europe-west4_training
  cluster:
    server: https://34.90.1.2
    certificate-authority-data: {CA_DATA}
contexts:
- name: gke_acme-ml_europe-west4_training
  context:
    cluster: gke_acme-ml_europe-west4_training
    user: gke_acme-ml_europe-west4_training
users:
- name: gke_acme-ml_europe-west4_training
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: gke-gcloud-auth-plugin
      installHint: Install gke-gcloud-auth-plugin for use with kubectl by following
        https://cloud.google.com/kubernetes-engine/docs/how-to/cluster-access-for-kubectl#install_plugin
      provideClusterInfo: true
      interactiveMode: IfAvailable
"""

# As `kind create cluster` writes it: everything inline.
KIND = f"""\
apiVersion: v1
kind: Config
clusters:
- cluster: {{certificate-authority-data: {CA_DATA}, server: "https://127.0.0.1:40111"}}
  name: kind-kind
contexts:
- context: {{cluster: kind-kind, user: kind-kind}}
  name: kind-kind
current-context: kind-kind
users:
- name: kind-kind
  user:
    client-certificate-data: {{cert}}
    client-key-data: {{key}}
"""


def write(tmp_path: Path, text: str) -> str:
    """The kubeconfig `text` written into `tmp_path`; its path."""
    path = tmp_path / "kubeconfig"
    path.write_text(text, encoding="utf-8")
    return str(path)

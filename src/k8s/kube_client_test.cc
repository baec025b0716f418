#include "seedance/k8s/kube_client.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "seedance/base/env.h"

namespace seedance::k8s {
namespace {

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

constexpr const char* kConfig = R"(apiVersion: v1
kind: Config
current-context: ml
clusters:
- name: other
  cluster: {server: "https://10.0.0.9:6443"}
- name: lab
  cluster:
    server: https://127.0.0.1:6443
    certificate-authority-data: aGVsbG8K
contexts:
- name: ml
  context: {cluster: lab, user: admin, namespace: default}
users:
- name: admin
  user:
    client-certificate: certs/admin.crt
    client-key: /abs/admin.key
    tokenFile: token
)";

TEST(KubeConfigTest, ReadsTheCurrentContextsClusterAndUser) {
  WriteTemp("token", "secret\n");
  const std::string path = WriteTemp("kubeconfig", kConfig);
  auto c = LoadKubeConfig(*base::Env::Default(), path);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_FALSE(c->insecure_skip_tls_verify);
  EXPECT_EQ(c->token, "secret");
  const std::string dir = ::testing::TempDir();
  EXPECT_EQ(c->client_cert_file, dir + "certs/admin.crt");  // relative to the kubeconfig
  EXPECT_EQ(c->client_key_file, "/abs/admin.key");
  auto ca = base::Env::Default()->ReadFile(c->ca_file);  // the inline data, decoded to a file
  ASSERT_TRUE(ca.ok());
  EXPECT_EQ(*ca, "hello\n");
}

TEST(KubeConfigTest, ErrorsNameTheFileLineAndKey) {
  std::string bad = kConfig;
  bad.replace(bad.find("current-context: ml"), 19, "current-context: nowhere");
  auto c = LoadKubeConfig(*base::Env::Default(), WriteTemp("bad1", bad));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("'nowhere' is not in contexts"), std::string::npos);
  EXPECT_NE(c.status().where().find("bad1:"), std::string::npos) << c.status().where();
  bad = kConfig;
  bad.replace(bad.find("cluster: lab"), 12, "cluster: gone");
  c = LoadKubeConfig(*base::Env::Default(), WriteTemp("bad2", bad));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("no cluster named 'gone'"), std::string::npos);
  bad = kConfig;
  bad.replace(bad.find("server: https://127.0.0.1:6443"), 30, "server: [1, 2]");
  c = LoadKubeConfig(*base::Env::Default(), WriteTemp("bad3", bad));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().where().find("bad3:9"), std::string::npos) << c.status().ToString();
  c = LoadKubeConfig(*base::Env::Default(),
                     WriteTemp("bad4", std::string(kConfig) + "---\na: 1\n"));
  EXPECT_FALSE(c.ok());  // a second document
}

}  // namespace
}  // namespace seedance::k8s

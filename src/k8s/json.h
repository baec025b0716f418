// The JSON side of k8s_objects.h, for the readers that meet Nodes and Pods inside larger
// documents (the extender's arguments, list and watch responses): the same conversions from an
// already parsed value. `where` prefixes the path in errors ("ExtenderArgs.Pod").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "seedance/base/status.h"
#include "seedance/k8s/objects.h"

namespace seedance::k8s::internal {

base::StatusOr<KubeNode> KubeNodeFromJson(const nlohmann::json& j, const std::string& where);
base::StatusOr<KubePod> KubePodFromJson(const nlohmann::json& j, const std::string& where);

// A string field at `key` of object `j` ("" when missing or null); an error when not a string.
base::StatusOr<std::string> StringAt(const nlohmann::json& j, std::string_view key,
                                     const std::string& where);

}  // namespace seedance::k8s::internal

#include "seedance/net/router.h"

namespace seedance::net {

HttpResponse PlainErrorPage(int status, const std::string& message) {
  HttpResponse res;
  res.status = status;
  res.body = std::to_string(status) + " " + HttpReasonPhrase(status) + ": " + message + "\n";
  return res;
}

Router::Router(ErrorPage error_page) : error_page_(std::move(error_page)) {}

void Router::Add(const std::string& method, const std::string& path, HttpHandler handler) {
  routes_[path].emplace_back(method, std::move(handler));
}

std::string Router::Allow(const std::string& path) const {
  const auto it = routes_.find(path);
  if (it == routes_.end()) return "";
  bool head = false;
  for (const auto& route : it->second) head = head || route.first == "HEAD";
  std::string allow;
  for (const auto& [method, handler] : it->second) {
    allow += (allow.empty() ? "" : ", ") + method;
    if (method == "GET" && !head) allow += ", HEAD";
  }
  return allow;
}

HttpResponse Router::operator()(const HttpRequest& request) const {
  const HttpRequestHead& h = request.head;
  const auto it = routes_.find(h.path);
  if (it == routes_.end()) return error_page_(404, "no route for " + h.method + " " + h.path);
  for (const auto& [method, handler] : it->second) {
    if (method == h.method || (h.method == "HEAD" && method == "GET")) return handler(request);
  }
  const std::string allow = Allow(h.path);
  HttpResponse res =
      error_page_(405, h.method + " is not allowed on " + h.path + "; allowed: " + allow);
  res.headers.emplace_back("Allow", allow);
  return res;
}

}  // namespace seedance::net

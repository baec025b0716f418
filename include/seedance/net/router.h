// Routes for an HttpServer handler: (method, path) -> handler, by exact path. A path no route has
// is 404; a known path asked with another method is 405 with an Allow field listing its methods
// (a GET route takes HEAD too, RFC 9110 9.3.2). The endpoint says how those errors look (JSON for
// the OpenAI API, the extender's {"error": ...}), through the same ErrorPage as the server's own.
//
// Thread safety: Add before serving; operator() from any thread.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "seedance/net/http_server.h"

namespace seedance::net {

// How an endpoint spells an error it did not expect a handler to write: status and a message in.
using ErrorPage = std::function<HttpResponse(int status, const std::string& message)>;

// The default ErrorPage: text/plain "<status> <reason>: <message>\n".
HttpResponse PlainErrorPage(int status, const std::string& message);

class Router {
 public:
  explicit Router(ErrorPage error_page = PlainErrorPage);

  void Add(const std::string& method, const std::string& path, HttpHandler handler);
  // The methods `path` takes, as an Allow field spells them ("GET, HEAD"); "" for none.
  std::string Allow(const std::string& path) const;
  HttpResponse operator()(const HttpRequest& request) const;

 private:
  ErrorPage error_page_;
  std::map<std::string, std::vector<std::pair<std::string, HttpHandler>>> routes_;  // by path
};

}  // namespace seedance::net

// Ordinary least squares by Householder QR (private to cost): the power-model fit's solver.
#pragma once

#include <cstddef>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::cost::internal {

// A dense row-major matrix.
class Matrix {
 public:
  Matrix(size_t rows, size_t cols) : rows_(rows), cols_(cols), v_(rows * cols, 0.0) {}
  double& operator()(size_t r, size_t c) { return v_[r * cols_ + c]; }
  double operator()(size_t r, size_t c) const { return v_[r * cols_ + c]; }
  size_t rows() const { return rows_; }
  size_t cols() const { return cols_; }

 private:
  size_t rows_, cols_;
  std::vector<double> v_;
};

struct LeastSquaresResult {
  std::vector<double> coefficients;     // b minimising |y - X b|
  std::vector<double> standard_errors;  // sqrt of diag(s^2 (X'X)^-1), s^2 = RSS / (n - p)
  double r_squared = 0;                 // 1 - RSS / TSS (TSS about the mean of y)
  double residual_rms = 0;              // sqrt(RSS / n)
};

// Requires rows > cols. Errors: a rank-deficient X (a column of R below 1e-10 of the largest).
base::StatusOr<LeastSquaresResult> LeastSquares(Matrix x, std::vector<double> y);

}  // namespace seedance::cost::internal

// The one error type for bad input files (case files, and later golden and safetensors files):
// it carries the file, the field and what was expected, so the command line can print a message
// that names all three and exit with code 2 (DESIGN.md, Conventions).
#pragma once

#include <stdexcept>
#include <string>

namespace lmo::oracle {

class InputError : public std::runtime_error {
 public:
  // field: a JSON-pointer-like path such as "cases[3].params.eps" ("" for the whole file).
  InputError(std::string file, std::string field, std::string expectation)
      : std::runtime_error(compose(file, field, expectation)),
        file_(std::move(file)),
        field_(std::move(field)),
        expectation_(std::move(expectation)) {}

  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }
  const std::string& expectation() const { return expectation_; }

 private:
  static std::string compose(const std::string& file, const std::string& field,
                             const std::string& expectation) {
    return file + (field.empty() ? "" : ": " + field) + ": " + expectation;
  }
  std::string file_, field_, expectation_;
};

}  // namespace lmo::oracle

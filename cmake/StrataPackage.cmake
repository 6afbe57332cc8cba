# Installation and the CMake package: find_package(Strata) -> Strata::strata.

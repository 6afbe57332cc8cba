// The files the coordinator writes under STRATA_FAULT_DIR:
//   <job>.diagnosis.jsonl  one diagnosis per line, as they happen
//   <job>.exclude          STRATA_FAULT_ACTION=exclude: hosts and GPUs to leave out at restart
//   <job>.links.json       at the end: the link latency matrix the detectors saw
#pragma once

#include "fault/settings.hpp"

#include <strata/fault.hpp>

#include <string>
#include <vector>

namespace strata::fault {

struct ProcessState;
class Coordinator;

void append_diagnosis(const Settings& settings, const ProcessState& p, const std::string& json);
void write_exclude(const Settings& settings, const ProcessState& p, const Diagnosis& d,
                   const std::vector<std::string>& gpus);
void write_links(const Settings& settings, const ProcessState& p, const Coordinator& c);
// DIR/<job><suffix>.
std::string job_file(const Settings& settings, const ProcessState& p, const char* suffix);

}  // namespace strata::fault

set -u
o=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
TABLE=.gpu-side/table77.json MODES=sequential,fused DTYPE=f32 TO=150 OUT=$o/a bash scripts/device/tuned_runs.sh palm-fc2-tp8 mtnlg-fc1bwd-tp8 palm-fc1bwd-tp8
DTYPE=f32 PER_S=55 TO=150 OUT=$o/b bash scripts/device/tuned_runs.sh gpt3-fc2-tp2 gpt3-fc1bwd-tp2 gpt3-ipbwd-tp2

set -u
o=$OUT; src=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p $o/demo && cd $o/demo
for i in 1 2; do
  s=$SECONDS; timeout 120 t3 > demo$i.txt 2>&1; echo "t3 (the demo, process $i) rc=$? $((SECONDS - s)) s"
  grep -E "^(sequential|host|encoded|fused) +[a-z]+ +[0-9]|^untuned|^fallback" demo$i.txt
done
mkdir -p keep && mv t3-* keep/ 2>/dev/null
cd $src
STOP_AT=330 TO=120 DTYPES=f32 OUT=$o/palm bash docs/results/run69/one.sh palm-op-tp8 palm-ipbwd-tp8 palm-fc2-tp8 palm-fc1bwd-tp8
echo "done ($SECONDS s)"
